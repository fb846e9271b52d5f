"""Snapshot tests of the key screens (pytest-textual-snapshot, 100×30 or 80×24).

Each screen is driven to a fixed state: the real app on the fake LLM server, with any
clock-dependent part (tool durations, the approval request) fed as fixed data, so the
pictures are the same in every run. Update with `pytest tests/tui --snapshot-update`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalRequest
from aistack_tui.llm import types as lt
from aistack_tui.permissions.types import Decision
from aistack_tui.tools.base import ToolCallDisplay
from aistack_tui.tools.diffs import file_diff
from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.screens.setup import SetupScreen
from aistack_tui.tui.widgets.entries import NoticeEntry
from fakes.fake_llm import Fault, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import entries, type_and_send

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def home_above_the_repo(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The welcome header shows the project as `~/repo`, the same in every run (the
    temporary directory's own name changes each time)."""
    monkeypatch.setenv("HOME", str(git_repo.parent))


async def _ready(pilot: Any) -> None:
    await wait_for(pilot, lambda: pilot.app.session is not None)
    pilot.app.prompt.cursor_blink = False
    await pilot.pause()


def test_idle_screen(snap_compare, make_app) -> None:
    """The empty conversation, the prompt with its placeholder and the status line."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_ready)


def test_idle_screen_80x24(snap_compare, make_app) -> None:
    """The same in the smallest supported terminal."""
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_ready)


async def _streaming(pilot: Any) -> None:
    await _ready(pilot)
    r = pilot.app.renderer
    await r.handle(ev.MessageAdded(lt.Message.user("Run the tests and fix what fails")))
    await r.handle(ev.TurnStarted(1, "anthropic", "claude-sonnet-4-5"))
    await r.handle(ev.TextDelta("I'll run the test suite first."))
    await r.handle(ev.MessageAdded(lt.Message(role="assistant", content=[
        lt.TextBlock(text="I'll run the test suite first.")])))
    await r.handle(ev.ToolCallRequested("t1", "Bash", {"command": "pytest -q"},
                                        ToolCallDisplay(summary="Bash pytest -q")))
    await r.handle(ev.ToolStarted("t1", "Bash"))
    await r.handle(ev.ToolFinished("t1", "Bash", lt.ToolResultBlock(
        tool_use_id="t1", content="1 failed, 12 passed"), 2.1))
    await r.handle(ev.ToolCallRequested("t2", "Read", {"file_path": "src/app.py"},
                                        ToolCallDisplay(summary="Read src/app.py")))
    await r.handle(ev.ToolFinished("t2", "Read", lt.ToolResultBlock(
        tool_use_id="t2", content="..."), 0.0,
        ToolCallDisplay(summary="Read src/app.py (120 lines)")))
    for piece in ["One test fails: `test_total`", " expects **15** but", " gets 14.\n\n```py",
                  "thon\ndef total(xs):\n    return sum(xs)"]:
        await r.handle(ev.TextDelta(piece))
    usage = lt.Usage(input_tokens=12000, output_tokens=800)
    await r.handle(ev.UsageUpdated(usage, usage, 0.048, 0.048, 12800, 200_000))
    await pilot.pause(0.2)


def test_streaming_turn(snap_compare, make_app) -> None:
    """A turn mid-stream: a finished answer, two tool cards, code streaming in."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_streaming)


def _edit_request() -> ApprovalRequest:
    old = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s - 1\n"
    new = "def total(xs):\n    return sum(xs)\n"
    return ApprovalRequest(
        tool_use_id="t9",
        tool_name="Edit",
        tool_input={"file_path": "src/app.py", "old_string": old, "new_string": new},
        decision=Decision("ask", "Edit src/app.py needs approval in default mode",
                          suggested_rule="Edit(./src/app.py)"),
        display=ToolCallDisplay(summary="Edit src/app.py (+1 -4)",
                                diff=file_diff("src/app.py", old, new)),
    )


async def _dialog(pilot: Any) -> None:
    await _ready(pilot)
    app = pilot.app
    app._snapshot_ask = asyncio.create_task(app.approver.decide(_edit_request()))
    await wait_for_screen(pilot, ConfirmScreen)
    await pilot.pause(0.1)


def test_diff_confirm_dialog(snap_compare, make_app) -> None:
    """The confirm dialog for an Edit: reason, unified diff, the four answers."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_dialog)


def test_diff_confirm_dialog_side_by_side(snap_compare, make_app) -> None:
    """On a wide terminal the diff is shown old | new."""
    assert snap_compare(make_app(), terminal_size=(160, 30), run_before=_dialog)


async def _error(pilot: Any) -> None:
    await _ready(pilot)
    await type_and_send(pilot, "hello")
    await wait_for(pilot, lambda: not pilot.app.busy and any(
        isinstance(e, NoticeEntry) and e.level == "error" for e in entries(pilot.app)))
    await pilot.pause(0.1)


def test_error(snap_compare, make_app) -> None:
    """A provider error that ends the run (401): shown in red, the session goes on."""
    app = make_app(Turn(text="never", faults=[Fault("http", status=401)]))
    assert snap_compare(app, terminal_size=SIZE, run_before=_error)


async def _setup(pilot: Any) -> None:
    await wait_for_screen(pilot, SetupScreen)
    await pilot.pause(0.2)


def test_setup_screen(snap_compare, git_repo, monkeypatch) -> None:
    """No provider key anywhere: the setup screen lists providers to configure."""
    from aistack_tui.session.config import make_run_config
    from aistack_tui.tui.app import AistackApp

    app = AistackApp(make_run_config(cwd=git_repo), None, local_servers=())
    assert snap_compare(app, terminal_size=SIZE, run_before=_setup)
