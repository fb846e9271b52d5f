"""bypassPermissions is not one Shift+Tab away (issue 22 item 2): the cycle offers it only
when the command line asked for it, `/mode bypass` asks first and leaves a line in the
conversation, and plan → default never passes through it."""

from __future__ import annotations

from aistack_tui.tui.screens.question import QuestionScreen
from aistack_tui.tui.widgets.status_bar import StatusBar
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import type_and_send
from tests.tui.test_session_commands import notices


async def cycle(pilot, presses: int) -> list[str]:
    seen = []
    for _ in range(presses):
        await pilot.press("shift+tab")
        seen.append(pilot.app.session.mode)
    return seen


async def test_shift_tab_never_reaches_bypass_unless_started_in_it(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        assert await cycle(pilot, 6) == ["acceptEdits", "plan", "default"] * 2


async def test_started_with_bypass_the_cycle_offers_it_but_plan_goes_straight_to_default(
    make_app
) -> None:
    app = make_app(permission_mode="bypassPermissions")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None and not app.status.state.busy)
        assert app.session.mode == "bypassPermissions"
        assert await cycle(pilot, 4) == ["plan", "default", "acceptEdits", "bypassPermissions"]


async def test_mode_bypass_asks_first_and_leaves_a_line(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/mode bypass")
        await wait_for_screen(pilot, QuestionScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: any("Stayed in default" in n for n in notices(app)))
        assert app.session.mode == "default"
        await type_and_send(pilot, "/mode bypass")
        await wait_for_screen(pilot, QuestionScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session.mode == "bypassPermissions")
        await wait_for(pilot, lambda: any("Permission mode: bypassPermissions" in n
                                          for n in notices(app)))
        assert app.query_one(StatusBar).state.mode == "bypassPermissions"
        # Shift+Tab leaves it, and the cycle does not come back to it.
        assert await cycle(pilot, 4) == ["default", "acceptEdits", "plan", "default"]
        # Other modes switch at once, with a line too.
        await type_and_send(pilot, "/mode plan")
        await wait_for(pilot, lambda: app.session.mode == "plan")
        await wait_for(pilot, lambda: any("Permission mode: plan" in n for n in notices(app)))
