"""The line mode's input line, driven through prompt_toolkit's own pipe input."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from aistack_tui.linemode.prompt import JsonLinesHistory, make_prompt_session
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.session.history import HISTORY_FILE

ESC = "\x1b"
UP = "\x1b[A"
SHIFT_TAB = "\x1b[Z"
CTRL_C = "\x03"


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp:
        yield inp


def session_for(
    pipe: PipeInput, history: JsonLinesHistory | None = None, modes: list[str] | None = None
) -> tuple[PromptSession[str], dict[str, str]]:
    state = {"mode": "default"}
    cycle = modes or []

    def next_mode() -> None:
        state["mode"] = cycle.pop(0)

    io_ = LineIO(Console(file=io.StringIO()), pipe, DummyOutput())
    prompt = make_prompt_session(
        io_, history=history or JsonLinesHistory(None), completer=None,
        mode=lambda: state["mode"], on_cycle_mode=next_mode,
    )
    return prompt, state


async def test_enter_sends_the_line(pipe: PipeInput) -> None:
    prompt, _ = session_for(pipe)
    pipe.send_text("hello there\r")
    assert await prompt.prompt_async() == "hello there"


async def test_a_trailing_backslash_continues_on_the_next_line(pipe: PipeInput) -> None:
    prompt, _ = session_for(pipe)
    pipe.send_text("first line\\\rsecond line\r")
    assert await prompt.prompt_async() == "first line\nsecond line"


async def test_a_backslash_inside_the_line_is_kept(pipe: PipeInput) -> None:
    prompt, _ = session_for(pipe)
    pipe.send_text("a\\b\r")
    assert await prompt.prompt_async() == "a\\b"


async def test_escape_enter_inserts_a_newline(pipe: PipeInput) -> None:
    prompt, _ = session_for(pipe)
    pipe.send_text(f"one{ESC}\rtwo\r")
    assert await prompt.prompt_async() == "one\ntwo"


async def test_ctrl_c_clears_a_line_and_on_an_empty_line_interrupts(pipe: PipeInput) -> None:
    prompt, _ = session_for(pipe)
    pipe.send_text(f"typed by mistake{CTRL_C}kept\r")
    assert await prompt.prompt_async() == "kept"
    pipe.send_text(CTRL_C)
    with pytest.raises(KeyboardInterrupt):
        await prompt.prompt_async()


async def test_ctrl_d_on_an_empty_line_ends_input(pipe: PipeInput) -> None:
    prompt, _ = session_for(pipe)
    pipe.send_text("\x04")
    with pytest.raises(EOFError):
        await prompt.prompt_async()


async def test_shift_tab_cycles_the_mode(pipe: PipeInput) -> None:
    prompt, state = session_for(pipe, modes=["acceptEdits", "plan"])
    pipe.send_text(f"{SHIFT_TAB}{SHIFT_TAB}go\r")
    assert await prompt.prompt_async() == "go"
    assert state["mode"] == "plan"


async def test_history_is_the_tui_file_both_ways(pipe: PipeInput, tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    # Written by the TUI: one JSON string per line, oldest first (a multi-line one too).
    path.write_text(json.dumps("older prompt") + "\n" + json.dumps("fix\nthe tests") + "\n")
    prompt, _ = session_for(pipe, JsonLinesHistory(path))
    pipe.send_text(f"{UP}\r")
    assert await prompt.prompt_async() == "fix\nthe tests"
    pipe.send_text(f"{UP}{UP}{UP}\r")  # past the newest entry, which was just re-sent
    assert await prompt.prompt_async() == "older prompt"
    pipe.send_text("a new one\r")
    await prompt.prompt_async()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines == ["older prompt", "fix\nthe tests", "older prompt", "a new one"]


def test_history_skips_blank_and_malformed_lines(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    path.write_text('"one"\nnot json\n42\n"  "\n"two"\n')
    assert list(JsonLinesHistory(path).load_history_strings()) == ["two", "one"]


def test_history_in_an_unwritable_home_is_silently_skipped(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    history = JsonLinesHistory(blocker / HISTORY_FILE)  # its parent is a file
    history.store_string("kept in memory only")
    assert list(history.load_history_strings()) == []


async def test_ctrl_r_searches_the_history(pipe: PipeInput, tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    path.write_text("".join(json.dumps(p) + "\n" for p in
                            ["run the linter", "fix the parser", "update docs"]))
    prompt, _ = session_for(pipe, JsonLinesHistory(path))
    pipe.send_text("\x12pars\r\r")  # Ctrl+R, a word, Enter takes the match, Enter sends
    assert await prompt.prompt_async() == "fix the parser"
