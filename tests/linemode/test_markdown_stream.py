"""The streaming Markdown splitter: which blocks are finished while an answer streams."""

from __future__ import annotations

import pytest

from aistack_tui.linemode.markdown_stream import MarkdownBlocks, finished_prefix, split_blocks

ANSWER = (
    "Intro line one\nline two\n\n"
    "1. first\n\n2. second\n   still second\n\n"
    "```python\nx = 1\n\ny = 2\n```\n"
    "After the fence.\n\n"
    "- item\n\n    item's own paragraph\n\n"
    "Last words"
)


def stream(text: str, step: int) -> tuple[list[str], list[str]]:
    """(blocks handed out while streaming, blocks handed out at the end)."""
    blocks = MarkdownBlocks()
    during: list[str] = []
    for i in range(0, len(text), step):
        blocks.feed(text[i : i + step])
        during += blocks.take_finished()
    return during, blocks.take_rest()


@pytest.mark.parametrize("step", [1, 3, 7, len(ANSWER)])
def test_blocks_are_the_same_however_the_text_is_chunked(step: int) -> None:
    during, rest = stream(ANSWER, step)
    assert during + rest == [
        "Intro line one\nline two",
        "1. first\n\n2. second\n   still second",
        "```python\nx = 1\n\ny = 2\n```",
        "After the fence.",
        "- item\n\n    item's own paragraph",
        "Last words",
    ]


def test_a_block_is_handed_out_once_the_next_line_starts_a_new_one() -> None:
    blocks = MarkdownBlocks()
    blocks.feed("First paragraph.\n\n")
    assert blocks.take_finished() == []  # the next line might continue a list or indent
    blocks.feed("Second")
    assert blocks.take_finished() == []  # its first line is not complete yet
    blocks.feed(" paragraph.\n")
    assert blocks.take_finished() == ["First paragraph."]
    assert blocks.tail == "Second paragraph.\n"


def test_blank_lines_inside_a_code_fence_do_not_end_the_block() -> None:
    text = "```\na\n\n\nb\n"
    assert finished_prefix(text) == 0
    assert finished_prefix(text + "```\n") == len(text) + 4  # the closing fence ends it


def test_a_fence_closes_only_with_its_own_kind_and_length() -> None:
    text = "````\n```\ninside\n~~~\n````\nafter\n"
    assert split_blocks(text) == ["````\n```\ninside\n~~~\n````", "after"]


def test_a_list_item_after_a_blank_line_stays_with_its_list() -> None:
    assert split_blocks("- a\n\n- b\n\nnot a list\n") == ["- a\n\n- b", "not a list"]


def test_reset_forgets_a_discarded_partial_answer() -> None:
    blocks = MarkdownBlocks()
    blocks.feed("partial answer that failed\n\nmore\n")
    blocks.reset()
    blocks.feed("Retried.")
    assert blocks.take_finished() == []
    assert blocks.take_rest() == ["Retried."]
