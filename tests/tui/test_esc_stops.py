"""Esc at a permission prompt denies the call and stops the turn (issue 22 item 3), as in
Claude Code; "No, and tell the model…" (`n`) denies and lets the agent go on."""

from __future__ import annotations

import json
from pathlib import Path

from aistack_tui.tui.widgets.entries import ToolEntry
from aistack_tui.tui.widgets.status_bar import StatusBar
from fakes.fake_llm import FakeLLMServer, Turn
from tests.tui.conftest import wait_for
from tests.tui.test_app import SOURCE, answered, edit_turns, entries, run_to_dialog


async def test_esc_at_a_permission_prompt_denies_and_stops_the_turn(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Going on anyway.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await run_to_dialog(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy and app.screen is app.main)
        card = next(e for e in entries(app) if isinstance(e, ToolEntry) and e.name == "Edit")
        assert card.state == "denied"
        assert app.query_one(StatusBar).state.busy == ""
        assert len(fake_llm.model_requests) == 2  # the model was not asked again
        results = json.dumps(app.session.agent.messages[-1].content, default=str)
    assert (git_repo / "a.py").read_text() == SOURCE
    assert "Permission denied" in results


async def test_no_with_a_message_denies_and_goes_on(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Understood.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await run_to_dialog(pilot)
        await pilot.press("n", *"keep it", "enter")
        await wait_for(pilot, lambda: answered(app, "Understood."))
    assert "The user said: keep it" in json.dumps(fake_llm.model_requests[-1].body)
    assert (git_repo / "a.py").read_text() == SOURCE


async def test_esc_in_the_message_box_goes_back_to_the_answers(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    from textual.widgets import Input

    from tests.tui.conftest import read_dialog

    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Fine.")))
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await run_to_dialog(pilot)
        await pilot.press("n", *"hm", "escape")
        box = dialog.query_one("#confirm-feedback", Input)
        assert app.screen is dialog and not box.display  # not a "stop", not a "no" yet
        read_dialog(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: answered(app, "Fine."))
    assert (git_repo / "a.py").read_text() != SOURCE
