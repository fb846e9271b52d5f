"""The /model picker always fills (issue 22 item 5): it opens on the offline catalogue,
merges a models endpoint's answer when it comes, and says in one line when the endpoint
failed. `/mode` + Enter runs /mode, not the /model completion below it."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from aistack_tui.llm.model_info import BUILT_IN
from aistack_tui.llm.models_endpoint import read_listing
from aistack_tui.tui.screens.model_picker import ModelPickerScreen
from fakes.fake_llm import FakeLLMServer
from fakes.fake_models import catalogues_from_ids
from tests.tui.conftest import MODEL, wait_for
from tests.tui.test_model_picker import LISTED, offered, open_picker
from tests.tui.test_session_commands import notices


def note(screen: ModelPickerScreen) -> str:
    widget = screen.query_one("#model-note", Static)
    return str(widget.render()) if widget.display else ""


async def test_a_failing_models_endpoint_is_one_line_over_the_offline_list(
    make_app, fake_llm: FakeLLMServer, aistack_home: Path
) -> None:
    fake_llm.set_models_answer(status=403)
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_picker(pilot)
        await wait_for(pilot, lambda: "Models endpoint failed" in note(screen))
        assert "anthropic" in note(screen) and "\n" not in note(screen)
        models = offered(screen)
        assert models == [MODEL, *(f"anthropic/{m}" for m in BUILT_IN["anthropic"])]
        assert not [m for m in models if "claude-picker" in m]
        assert read_listing(aistack_home, "anthropic") is None


async def test_the_endpoints_answer_is_merged_into_the_open_picker(
    make_app, fake_llm: FakeLLMServer, aistack_home: Path
) -> None:
    fake_llm.set_models("anthropic", catalogues_from_ids(LISTED)["anthropic"])
    fake_llm.set_models_answer(delay=2.5)
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_picker(pilot)
        # At once: the offline catalogue, while the endpoint has not answered yet.
        await wait_for(pilot, lambda: len(offered(screen)) > 3, timeout=2)
        assert read_listing(aistack_home, "anthropic") is None
        assert not [m for m in offered(screen) if "claude-picker" in m]
        # Then its answer, in the same picker.
        await wait_for(pilot, lambda: f"anthropic/{LISTED[0]}" in offered(screen))
        assert offered(screen)[0] == MODEL
        assert note(screen) == ""


async def test_mode_and_enter_runs_mode_not_the_model_completion(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press(*"/mode", "enter")
        await wait_for(pilot, lambda: any("Permission modes" in n for n in notices(app)))
        assert not isinstance(app.screen, ModelPickerScreen)
