"""What the status line and header say is true (issue 22 item 9): "starting…" while the
session opens (not "no model"), the header's model after /model, `ctx %` of the new
conversation after /clear and of the resumed one after a resume."""

from __future__ import annotations

import json
from pathlib import Path

from fakes.fake_llm import Turn
from tests.tui.conftest import screen_text, wait_for
from tests.tui.test_app import answered, type_and_send
from tests.tui.test_session_commands import command, notices


async def test_the_status_line_says_starting_while_the_session_opens(
    make_app, aistack_home: Path
) -> None:
    # A SessionStart hook holds the start open, as a slow SDK import does.
    (aistack_home / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "sleep 1"}]}]}}))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.3)
        assert app.session is None
        status = screen_text(app).splitlines()[-1]
        assert "starting…" in status and "no model" not in status
        await wait_for(pilot, lambda: app.session is not None and not app.status.state.busy)
        assert "claude-sonnet-4-6" in screen_text(app).splitlines()[-1]


async def test_header_and_ctx_are_current_after_model_switch_clear_and_resume(
    make_app
) -> None:
    app = make_app(Turn(text="Hello there. " * 50))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: answered(app, "Hello there. " * 50))
        assert app.status.state.context_tokens > 0
        first = app.session.session_id
        await type_and_send(pilot, "/model anthropic/claude-opus-4-1")
        await wait_for(pilot, lambda: any("Switched to" in n for n in notices(app)))
        assert "model anthropic/claude-opus-4-1" in screen_text(app)  # the header
        await type_and_send(pilot, "/clear")
        await wait_for(pilot, lambda: any("new conversation" in n for n in notices(app)))
        assert app.status.state.context_tokens == 0
        assert "ctx 0%" in screen_text(app).splitlines()[-1]
        await app.resume_session(first)
        await pilot.pause()
        assert app.status.state.context_tokens > 0  # estimated until the next request


async def test_cost_and_ctx_of_a_resumed_session_are_known_at_once(make_app) -> None:
    app = make_app(Turn(text="Hello there. " * 50))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: answered(app, "Hello there. " * 50))
        spent = app.session.usage.usage
        cost = app.session.usage.cost_usd
        assert spent.input_tokens > 0 and cost
    again = make_app(continue_latest=True)
    async with again.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: again.session is not None and not again.status.state.busy)
        assert again.session.usage.usage == spent
        status = screen_text(again).splitlines()[-1]
        assert f"${cost:.4f}" in status and "ctx 0%" not in status, status
        shown = await command(pilot, "/cost", "Cost:")
        assert f"Input {spent.input_tokens:,}" in shown and f"${cost:.4f}" in shown


async def test_after_a_key_is_entered_in_setup_it_says_starting(
    git_repo: Path, monkeypatch, fake_llm, aistack_home: Path
) -> None:
    from aistack_tui.session.config import make_run_config
    from aistack_tui.tui.app import AistackApp
    from aistack_tui.tui.screens.setup import SetupScreen
    from tests.tui.conftest import wait_for_screen

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    (aistack_home / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "sleep 1"}]}]}}))
    app = AistackApp(make_run_config(cwd=git_repo), None, local_servers=())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_screen(pilot, SetupScreen)
        await pilot.press("enter")  # Anthropic
        await pilot.press(*"fake-key", "enter")
        await pilot.pause(0.3)
        assert app.session is None and app.screen is app.main
        status = screen_text(app).splitlines()[-1]
        assert "starting…" in status and "no model" not in status
        await wait_for(pilot, lambda: app.session is not None)
