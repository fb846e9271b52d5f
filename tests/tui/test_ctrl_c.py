"""Pilot tests of Ctrl+C (issue 14 item 3): it stops a working agent like Esc, clears a
prompt with text in it, and only on an idle, empty prompt arms "press again to quit" —
without the hint pushing the cost off an 80-column status line."""

from __future__ import annotations

import asyncio

from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.widgets.entries import AssistantEntry, ToolEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from aistack_tui.tui.widgets.status_bar import StatusBar
from fakes.fake_llm import ToolCall, Turn
from tests.tui.conftest import screen_text, wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send

LONG = "word " * 400


async def ready(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.session is not None)


def status_row(app) -> str:
    """The status line as the user reads it (the bottom row of the screen)."""
    return screen_text(app).splitlines()[-1]


async def test_ctrl_c_while_the_agent_streams_interrupts_it(make_app) -> None:
    app = make_app(Turn(text=LONG, chunk_size=5, delay=0.02))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "talk a lot")
        await wait_for(pilot, lambda: any(isinstance(e, AssistantEntry) and len(e.text) > 20
                                          for e in entries(app)))
        await pilot.press("ctrl+c")
        assert "Ctrl+C again" not in app.query_one(StatusBar).state.hint
        await wait_for(pilot, lambda: not app.busy, timeout=5)
        answer = next(e for e in entries(app) if isinstance(e, AssistantEntry))
        assert answer.interrupted and 0 < len(answer.text) < len(LONG)
        assert app.session.agent.messages[-1].stop_reason == "interrupted"
        assert app.is_running and app.return_code is None
        # The next Ctrl+C on the now idle, empty prompt is the first of two, not the second.
        await pilot.press("ctrl+c")
        assert "Ctrl+C again" in app.query_one(StatusBar).state.hint
        assert app.is_running


async def test_ctrl_c_while_an_approval_is_open_interrupts_the_turn(make_app, git_repo) -> None:
    # A new file: writing over one the model has not read fails before anyone is asked.
    app = make_app(Turn(tool_calls=[ToolCall(
        "Write", {"file_path": "a.py", "content": "x = 2\n"})]))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "change a.py")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.busy and app.screen is app.main, timeout=8)
        assert "Ctrl+C again" not in app.query_one(StatusBar).state.hint
        card = next(e for e in entries(app) if isinstance(e, ToolEntry))
        assert card.state != "done"
        assert not (git_repo / "a.py").exists()
        assert app.is_running


async def test_ctrl_c_with_text_clears_the_prompt_without_arming_quit(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        prompt = app.query_one(PromptInput)
        prompt.load_text("half a thought")
        await pilot.press("ctrl+c")
        assert prompt.text == ""
        assert app.query_one(StatusBar).state.hint == ""
        await pilot.press("ctrl+c")
        assert "Ctrl+C again" in app.query_one(StatusBar).state.hint


async def test_quit_hint_leaves_state_mode_context_and_cost_visible_at_80_columns(
    make_app,
) -> None:
    app = make_app(Turn(text="Hello."))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: answered(app, "Hello."))
        status = app.query_one(StatusBar)
        assert status.state.cost_usd is not None
        await pilot.press("ctrl+c")
        await pilot.pause()
        row = status_row(app)
        assert "Ctrl+C again" in row
        assert f"${status.state.cost_usd:.4f}" in row, row
        assert "ctx " in row and "default" in row, row


async def test_ctrl_c_after_the_answer_while_the_session_records_it_arms_quit(
    make_app,
) -> None:
    """After the turn's end the session still records it (usage, the end-of-turn
    callbacks; slow on a loaded machine). Ctrl+C then is the first of two to quit: it
    used to "interrupt" that bookkeeping, and the status stayed at "interrupting"."""
    app = make_app(Turn(text="Hello."))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        release = asyncio.Event()
        record = app.session.turns._record_usage

        async def slow_record() -> None:
            await release.wait()
            await record()

        app.session.turns._record_usage = slow_record
        status = app.query_one(StatusBar)
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: status.state.busy == "" and any(
            isinstance(e, AssistantEntry) and e.text == "Hello." for e in entries(app)))
        assert app.bridge.running  # the session is still recording the turn
        await pilot.press("ctrl+c")
        assert "Ctrl+C again" in status.state.hint
        assert status.state.busy == ""
        release.set()
        await wait_for(pilot, lambda: not app.busy, timeout=5)
        assert status.state.busy == ""
        answer = next(e for e in entries(app) if isinstance(e, AssistantEntry))
        assert not answer.interrupted
        assert app.is_running
