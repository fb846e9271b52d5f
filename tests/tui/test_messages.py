"""A streamed answer: cut into frozen parts as it grows, and the same on screen as the
answer rendered in one piece, whatever the token boundaries and flush timing were."""

from __future__ import annotations

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Static

from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.entries import AssistantEntry
from aistack_tui.tui.widgets.messages import (
    FREEZE_CHARS,
    INTERRUPTED_SUFFIX,
    MERGE_FAN_IN,
    AssistantMessage,
    FrozenAnswer,
    MarkdownPart,
    split_complete_blocks,
)

WIDTH = 100


def long_answer(steps: int) -> str:
    """Every block type Rich renders differently: headings, prose, lists, tables, code,
    quotes, rules (after which Rich puts no blank line), an ordered list."""
    out = ["# Plan\n\nFirst the overview, then the steps."]
    for i in range(steps):
        out.append(
            f"## Step {i}\n\nThis paragraph explains step {i} with **bold** and `code` "
            f"in enough words to wrap at least once across the terminal width.\n\n"
            f"- item {i}.1\n- item {i}.2\n  continued\n\n| a | b |\n|---|---|\n| {i} | x |\n\n"
            f"```python\ndef step_{i}(x):\n    return x * {i}\n```\n\n> a quote {i}\n\n---\n\n"
            f"1. one\n2. two"
        )
    return "\n\n".join(out) + "\n"


def rendered(renderable: object) -> list[str]:
    console = Console(width=WIDTH, force_terminal=True, color_system="truecolor")
    with console.capture() as capture:
        console.print(renderable)
    return capture.get().splitlines()


def shown(message: AssistantMessage) -> list[str]:
    """What the message's frozen widgets show, top to bottom, rendered at one width."""
    lines: list[str] = []
    for child in message.children:
        assert isinstance(child, Static) and child.has_class("frozen")
        lines += rendered(child.content)
    return lines


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation(id="conversation")


async def stream(
    text: str, step: int, *, pause_every: int = 250, pause_s: float = 0.04
) -> tuple[list[str], int]:
    """Stream `text` in `step`-sized fragments, letting the UI flush about every
    `pause_every` characters; returns what the finished message shows and how many
    widgets it is made of."""
    app = Host()
    async with app.run_test(size=(WIDTH + 2, 30)) as pilot:
        conversation = app.query_one(Conversation)
        message = await conversation.add(AssistantEntry())
        assert isinstance(message, AssistantMessage)
        since_pause = 0
        for start in range(0, len(text), step):
            await message.write(text[start : start + step])
            since_pause += step
            if since_pause >= pause_every:
                since_pause = 0
                await pilot.pause(pause_s)  # let flushes (and cuts) happen mid-stream
        for _ in range(100):  # the last flush comes within a few frames
            if message.shown_chars == len(text):
                break
            await pilot.pause(0.02)
        assert message.shown_chars == len(text)
        await message.freeze()
        await pilot.pause()
        return shown(message), len(message.children)


@pytest.mark.parametrize(
    ("text", "cut", "blank"),
    [
        ("one paragraph", 0, False),
        ("para\n\n```py\nopen fence", 6, True),
        ("# H\n\npara\n\n- a\n- b", 11, True),
        ("text\n\n---\n\nafter", 11, False),  # no blank line after a rule
        ("a\r\n\r\nb", 0, False),
    ],
)
def test_split_complete_blocks_cuts_before_the_last_block(text: str, cut: int,
                                                          blank: bool) -> None:
    assert split_complete_blocks(text) == (cut, blank)


@pytest.mark.parametrize("step", [3, 41])
async def test_streamed_answer_renders_exactly_like_the_whole_answer(step: int) -> None:
    text = long_answer(24)
    lines, widgets = await stream(text, step)
    assert widgets > 1  # it was cut into parts while streaming
    assert lines == rendered(MarkdownPart(text))


async def test_a_long_answer_stays_a_handful_of_widgets() -> None:
    """Parts are merged, so layout work per frame does not grow with the answer."""
    text = long_answer(40)  # about 12 KB: some 50 flushes, nearly each one cutting
    lines, widgets = await stream(text, 60, pause_every=240, pause_s=0.07)
    # How many cuts the stream makes depends on the machine's speed; whatever their
    # number, the newest level holds fewer than 2 * MERGE_FAN_IN widgets and the next
    # one a widget per MERGE_FAN_IN cuts, plus the final part: about 20 here, where
    # unmerged parts would number up to one per cut (48).
    most_cuts = len(text) // FREEZE_CHARS
    assert widgets <= (2 * MERGE_FAN_IN - 1) + -(-most_cuts // MERGE_FAN_IN) + 1 < most_cuts
    assert lines == rendered(MarkdownPart(text))


async def test_interrupted_answer_keeps_its_text_and_says_so() -> None:
    app = Host()
    async with app.run_test(size=(WIDTH + 2, 30)) as pilot:
        entry = AssistantEntry()
        message = await app.query_one(Conversation).add(entry)
        assert isinstance(message, AssistantMessage)
        text = long_answer(6)[:-200]
        for start in range(0, len(text), 50):
            await message.write(text[start : start + 50])
            await pilot.pause(0.01)
        entry.interrupted = True
        await message.freeze()
        await pilot.pause()
        assert shown(message) == rendered(MarkdownPart(text + INTERRUPTED_SUFFIX))


async def test_final_text_that_differs_from_the_stream_is_rendered_whole() -> None:
    """The model's final message wins over what was streamed (e.g. after a fix-up)."""
    app = Host()
    async with app.run_test(size=(WIDTH + 2, 30)) as pilot:
        entry = AssistantEntry()
        message = await app.query_one(Conversation).add(entry)
        assert isinstance(message, AssistantMessage)
        streamed = long_answer(8)
        for start in range(0, len(streamed), 60):
            await message.write(streamed[start : start + 60])
            await pilot.pause(0.01)
        entry.text = "A different, short answer."
        await message.freeze()
        await pilot.pause()
        assert shown(message) == rendered(MarkdownPart(entry.text))
        assert len(message.children) == 1


async def test_history_answers_are_single_frozen_widgets() -> None:
    app = Host()
    async with app.run_test(size=(WIDTH + 2, 30)) as pilot:
        conversation = app.query_one(Conversation)
        text = long_answer(2)
        await conversation.load([AssistantEntry(text, finished=True)])
        await pilot.pause()
        widget = app.query_one(FrozenAnswer)
        assert rendered(widget.content) == rendered(MarkdownPart(text))
