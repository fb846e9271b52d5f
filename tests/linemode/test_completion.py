"""Completion of /commands and @paths in the line mode's prompt."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from aistack_tui.linemode.commands import COMMANDS
from aistack_tui.linemode.completion import LineCompleter
from aistack_tui.linemode.prompt import JsonLinesHistory, make_prompt_session
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.session.mentions import FileIndex


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


def completions(completer: LineCompleter, text: str) -> list[tuple[str, int, str]]:
    found = completer.get_completions(Document(text, len(text)), CompleteEvent())
    return [(c.text, c.start_position, c.display_meta_text) for c in found]


def project(tmp_path: Path) -> Path:
    (tmp_path / ".gitignore").write_text("build/\n")
    for rel in ["src/calc.py", "src/app.py", "docs/calc.md", "build/calc.py"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return tmp_path


def test_slash_completes_command_names_with_their_help() -> None:
    completer = LineCompleter(COMMANDS.names, None)
    found = completions(completer, "/mo")
    assert [text for text, _, _ in found] == ["/mode", "/model"]
    assert all(start == -3 for _, start, _ in found)  # replaces the whole "/mo"
    assert found[0][2] == COMMANDS.commands["mode"].help


def test_commands_complete_only_as_the_first_word() -> None:
    completer = LineCompleter(COMMANDS.names, None)
    assert completions(completer, "/model anth") == []
    assert completions(completer, "explain /mo") == []


def test_at_completes_project_files_but_not_ignored_ones(tmp_path: Path) -> None:
    completer = LineCompleter(COMMANDS.names, FileIndex(project(tmp_path)))
    found = completions(completer, "look at @calc")
    paths = [text for text, _, _ in found]
    assert paths[:2] == ["src/calc.py", "docs/calc.md"]
    assert "build/calc.py" not in paths
    assert all(start == -len("calc") for _, start, _ in found)


def test_an_email_address_is_not_a_mention(tmp_path: Path) -> None:
    completer = LineCompleter(COMMANDS.names, FileIndex(project(tmp_path)))
    assert completions(completer, "mail me@calc") == []


async def test_tab_in_the_prompt_inserts_the_first_candidate(tmp_path: Path) -> None:
    completer = LineCompleter(COMMANDS.names, FileIndex(project(tmp_path)))
    with create_pipe_input() as pipe:
        prompt = make_prompt_session(
            LineIO(Console(file=io.StringIO()), pipe, DummyOutput()),
            history=JsonLinesHistory(None), completer=completer, mode=lambda: "default",
        )
        answer = asyncio.ensure_future(prompt.prompt_async())
        buffer = prompt.default_buffer
        pipe.send_text("explain @app")
        await until(lambda: buffer.complete_state is not None)  # the menu opened by itself
        pipe.send_text("\t")
        await until(lambda: buffer.text.endswith(".py"))
        pipe.send_text("\r")
        assert await answer == "explain @src/app.py"
