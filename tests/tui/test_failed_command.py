"""A failing command looks failed (issue 22 item 8): a Bash card whose command exited
non-zero shows ✗, live and when the session is resumed; a passing one shows ✓."""

from __future__ import annotations

from aistack_tui.tui.widgets.entries import ToolEntry
from fakes.fake_llm import ToolCall, Turn
from tests.tui.conftest import screen_text, wait_for
from tests.tui.test_app import answered, entries, type_and_send


def bash_cards(app) -> list[ToolEntry]:
    return [e for e in entries(app) if isinstance(e, ToolEntry) and e.name == "Bash"]


async def test_a_bash_card_with_a_non_zero_exit_is_not_a_green_tick(make_app) -> None:
    app = make_app(Turn(tool_calls=[ToolCall("Bash", {"command": "ls no-such-dir"}),
                                    ToolCall("Bash", {"command": "ls"})]),
                   Turn(text="One failed."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "list things")
        await wait_for(pilot, lambda: answered(app, "One failed."))
        failing, passing = bash_cards(app)
        assert failing.state == "failed" and "(exit 2)" in failing.summary
        assert passing.state == "done"
        rows = [line for line in screen_text(app).splitlines() if "Bash" in line]
        assert any("✗ Bash" in row and "exit 2" in row for row in rows), rows
        session_id = app.session.session_id
    again = make_app(resume=session_id)
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: len(bash_cards(again)) == 2)
        assert [c.state for c in bash_cards(again)] == ["failed", "done"]
