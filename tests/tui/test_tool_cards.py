"""Tool cards a person reads all day: honest times, whole output on demand, live Bash
output, and the same cards in a resumed session as in a live one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path

import pytest
from textual.selection import Selection
from textual.widgets import OptionList

from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.widgets.entries import NoticeEntry, ShellEntry, ToolEntry
from aistack_tui.tui.widgets.messages import ShellMessage
from aistack_tui.tui.widgets.tool_card import ToolCard
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.processes import running
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send


def cards(app) -> list[ToolEntry]:
    return [e for e in entries(app) if isinstance(e, ToolEntry)]


async def test_card_time_excludes_the_wait_for_approval(make_app) -> None:
    app = make_app(Turn(tool_calls=[ToolCall("Bash", {"command": "python3 -m calendar 2024 1"})]),
                   Turn(text="Shown."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "show a calendar")
        await wait_for_screen(pilot, ConfirmScreen)
        await asyncio.sleep(1.5)  # the person reads the dialog
        await pilot.press("y")
        await wait_for(pilot, lambda: answered(app, "Shown."))
        card = cards(app)[0]
        assert card.state == "done"
        assert card.duration_s is not None and card.duration_s < 1.0


# --- the slash menu ---------------------------------------------------------------------


async def test_slash_menu_descriptions_start_in_one_column(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press("/")
        options = app.screen.query_one("#completions", OptionList)
        assert options.display and options.option_count > 5
        columns = set()
        for i in range(options.option_count):
            option = options.get_option_at_index(i)
            label = str(option.prompt)
            name = option.id or ""
            assert label.startswith(name)
            description = label[len(name):]
            columns.add(len(name) + len(description) - len(description.lstrip()))
        assert len(columns) == 1, columns


# --- long output ------------------------------------------------------------------------


def card_text(card: ToolCard) -> str:
    """Everything the card shows (its text as a mouse selection of all of it copies it)."""
    return card.get_selection(Selection(None, None))[0]


async def test_a_long_result_can_be_shown_whole(make_app, git_repo: Path) -> None:
    (git_repo / "long.txt").write_text("".join(f"row {i}\n" for i in range(1, 151)))
    app = make_app(Turn(tool_calls=[ToolCall("Read", {"file_path": "long.txt"})]),
                   Turn(text="Read."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "read long.txt")
        await wait_for(pilot, lambda: answered(app, "Read."))
        card = app.query_one(ToolCard)
        card.focus()
        await pilot.press("enter")  # open: the first lines and how many more
        await pilot.pause()
        shown = card_text(card)
        assert "row 1" in shown and "row 150" not in shown
        assert "more lines" in shown and "Enter shows all" in shown
        await pilot.press("enter")  # all of it
        await pilot.pause()
        shown = card_text(card)
        assert "row 150" in shown and "more lines" not in shown
        await pilot.press("enter")  # closed again
        await pilot.pause()
        assert "row 1\n" not in card_text(card) and not card.entry.expanded


# --- start-up ---------------------------------------------------------------------------


async def test_shift_tab_during_start_up_is_kept(make_app, aistack_home: Path) -> None:
    # The user's own SessionStart hook holds the start-up open for a moment (after the
    # permission engine was built), as a slow SDK import does in a fresh process.
    (aistack_home / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "sleep 1"}]}]}}))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("shift+tab", "shift+tab")  # acceptEdits, then plan
        assert app.session is None  # pressed while the session was still opening
        assert app.status.state.mode == "plan"
        await wait_for(pilot, lambda: app.session is not None and not app.status.state.busy)
        assert app.session.mode == "plan"
        assert app.status.state.mode == "plan"


# --- !command output --------------------------------------------------------------------


def shell_widget(app) -> ShellMessage:
    return app.query(ShellMessage).last()


async def test_shell_output_opens_capped_and_shows_all_on_demand(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "!seq 1 100")
        await wait_for(pilot, lambda: any(isinstance(e, ShellEntry) for e in entries(app)))
        await pilot.pause()
        widget = shell_widget(app)
        shown = widget.get_selection(Selection(None, None))[0]
        assert "\n40\n" in shown and "\n41\n" not in shown
        assert "60 more lines" in shown and "Enter shows all" in shown
        widget.focus()
        await pilot.press("enter")
        await pilot.pause()
        shown = widget.get_selection(Selection(None, None))[0]
        assert "\n100" in shown and "more lines" not in shown


async def test_shell_output_reaches_the_model_capped_like_bash(make_app,
                                                                fake_llm: FakeLLMServer) -> None:
    app = make_app(Turn(text="Seen."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "!seq 1 40000")
        await wait_for(pilot, lambda: any(isinstance(e, ShellEntry) for e in entries(app)))
        await type_and_send(pilot, "what did it print?")
        await wait_for(pilot, lambda: answered(app, "Seen."))
        sent = str(fake_llm.model_requests[0].body["messages"][0])
        assert "<user-shell-command>seq 1 40000</user-shell-command>" in sent
        assert "\\n1\\n2\\n3\\n" in sent and "\\n40000" in sent  # head and tail kept
        assert "bytes of output omitted" in sent
        assert len(sent) < 40_000


# --- a running command ------------------------------------------------------------------


async def test_a_running_bash_card_shows_elapsed_time_and_live_output(make_app) -> None:
    command = "for i in 1 2 3; do echo line$i; sleep 0.8; done"
    app = make_app(Turn(tool_calls=[ToolCall("Bash", {"command": command})]),
                   Turn(text="Ran."), permission_mode="bypassPermissions")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "count slowly")
        await wait_for(pilot, lambda: cards(app) and cards(app)[0].state == "running")
        card = app.query_one(ToolCard)
        await wait_for(pilot, lambda: "line1" in card_text(card))
        assert "line3" not in card_text(card)  # shown while it runs, not after
        first = card.summary_line().plain
        await asyncio.sleep(1.1)
        await pilot.pause()
        assert card.entry.state == "running"
        assert card.summary_line().plain != first  # the elapsed time moves on
        assert "line2" in card_text(card)
        await wait_for(pilot, lambda: answered(app, "Ran."))
        assert card.entry.state == "done" and card.entry.duration_s >= 2.0


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_esc_stops_a_running_shell_command_and_what_it_started(make_app,
                                                                     key: str) -> None:
    """`!command` promises "Esc interrupts" like a turn (and Ctrl+C stops what works, as
    it does a turn): the command and a process it started in a session of its own both
    end, and the conversation says so."""
    marker = f"sleep 43.{os.getpid()}"
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        try:
            await type_and_send(pilot, f"!setsid {marker} & sleep 42.{os.getpid()}")
            await wait_for(pilot, lambda: bool(running(marker)))
            assert app.shell_running
            await pilot.press(key)
            await wait_for(pilot, lambda: not running(marker) and not app.shell_running)
            await wait_for(pilot, lambda: any(
                isinstance(e, NoticeEntry) and e.text.startswith("Stopped: !setsid")
                for e in entries(app)))
            assert app.screen is app.main  # not the rewind list
            assert app.is_running  # and not a quit
        finally:
            for pid in running(marker):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
