"""The confirm dialog's four answers and the approver's queue, on a bare host app
(with a fake keystroke clock: the dialog takes only deliberate keys)."""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.app import App
from textual.widgets import Input, Static

from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.permissions.types import Decision
from aistack_tui.tools.base import ToolCallDisplay
from aistack_tui.tools.diffs import file_diff
from aistack_tui.tui.approval import ScreenApprover
from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.typing_guard import TypingGuard
from fakes.fake_clock import FakeClock
from tests.tui.conftest import read_dialog, screen_text


class Host(App[None]):
    """A bare app with what a dialog asks of its host: a typing guard, a prompt (here a
    list of what reached it)."""

    def __init__(self) -> None:
        super().__init__()
        self.typing_guard = TypingGuard(FakeClock())
        self.typed: list[str] = []

    def type_ahead(self, event: events.Key | events.Paste) -> None:
        self.typed.append(event.text if isinstance(event, events.Paste) else event.key)


def edit_request(tool_id: str = "t1", rule: str | None = "Edit(./a.py)") -> ApprovalRequest:
    diff = file_diff("a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")
    return ApprovalRequest(
        tool_use_id=tool_id,
        tool_name="Edit",
        tool_input={"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"},
        decision=Decision("ask", "Edits ask in default mode", suggested_rule=rule),
        display=ToolCallDisplay(summary="Edit a.py", diff=diff),
    )


async def ask(keys: list[str], request: ApprovalRequest | None = None,
              feedback: str = "") -> ApprovalDecision:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        approver = ScreenApprover(app)
        task = asyncio.create_task(approver.decide(request or edit_request()))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        read_dialog(app)
        await pilot.press(*keys)
        if feedback:
            feedback_input = app.screen.query_one("#confirm-feedback", Input)
            assert feedback_input.display and feedback_input.has_focus
            await pilot.press(*feedback, "enter")
        return await asyncio.wait_for(task, 5)


@pytest.mark.parametrize(("keys", "kind"), [
    (["1"], "once"), (["y"], "once"), (["2"], "session"), (["3"], "save"),
    (["escape"], "reject"),
])
async def test_each_key_gives_its_answer(keys: list[str], kind: str) -> None:
    assert (await ask(keys)).kind == kind


async def test_no_with_a_message_for_the_model() -> None:
    decision = await ask(["4"], feedback="use a constant")
    assert decision == ApprovalDecision("reject", "use a constant")


async def test_rule_answers_are_absent_without_a_suggested_rule() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        approver = ScreenApprover(app)
        task = asyncio.create_task(approver.decide(edit_request(rule=None)))
        await pilot.pause()
        options = str(app.screen.query_one("#confirm-options", Static).render())
        assert "save" not in options
        read_dialog(app)
        await pilot.press("2")  # ignored: there is no rule to grant
        assert not task.done()
        read_dialog(app)
        await pilot.press("n", "enter")
        assert (await asyncio.wait_for(task, 5)).kind == "reject"


async def test_parallel_asks_queue_one_dialog_at_a_time() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        approver = ScreenApprover(app)
        first = asyncio.create_task(approver.decide(edit_request("a")))
        second = asyncio.create_task(approver.decide(edit_request("b")))
        await pilot.pause()
        read_dialog(app)
        assert len([s for s in app.screen_stack if isinstance(s, ConfirmScreen)]) == 1
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.request.tool_use_id == "a"
        await pilot.press("1")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.request.tool_use_id == "b"
        read_dialog(app)
        await pilot.press("escape")
        assert (await first).kind == "once"
        assert (await second).kind == "reject"


async def test_dialog_shows_reason_and_diff_side_by_side_when_wide() -> None:
    app = Host()
    async with app.run_test(size=(160, 40)) as pilot:
        task = asyncio.create_task(ScreenApprover(app).decide(edit_request()))
        await pilot.pause()
        screen = app.screen
        assert "Edits ask in default mode" in str(screen.query_one("#confirm-reason").render())
        rows = [line for line in screen_text(app).splitlines() if "y = 2" in line]
        assert rows and "y = 3" in rows[0]  # old and new on the same row
        assert "+1 -1" in screen_text(app)
        read_dialog(app)
        await pilot.press("escape")
        await task
