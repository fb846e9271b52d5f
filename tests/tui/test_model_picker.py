"""Pilot tests of the model picker (issue 14 item 13): `/model` offers the real catalogue
of the providers this user has keys for (here Anthropic's models endpoint, as cached by
the background refresh), not a fixed list of four, and choosing one switches to it."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from aistack_tui.llm.models_endpoint import read_listing
from aistack_tui.tui.screens.model_picker import ModelPickerScreen
from aistack_tui.tui.widgets.status_bar import StatusBar
from fakes.fake_llm import FakeLLMServer
from fakes.fake_models import catalogues_from_ids
from tests.tui.conftest import MODEL, wait_for, wait_for_screen
from tests.tui.test_app import type_and_send

LISTED = ["claude-picker-alpha-1", "claude-picker-beta-2", "claude-picker-gamma-3",
          "claude-picker-delta-4", "claude-picker-epsilon-5"]


def offered(screen: ModelPickerScreen) -> list[str]:
    options = screen.query_one("#model-list", OptionList)
    return [options.get_option_at_index(i).id or "" for i in range(options.option_count)]


async def open_picker(pilot) -> ModelPickerScreen:
    app = pilot.app
    await wait_for(pilot, lambda: app.session is not None)
    await type_and_send(pilot, "/model")
    return await wait_for_screen(pilot, ModelPickerScreen)


async def test_model_picker_offers_the_catalogue_of_the_configured_providers(
    make_app, fake_llm: FakeLLMServer, aistack_home: Path
) -> None:
    fake_llm.set_models("anthropic", catalogues_from_ids(LISTED)["anthropic"])
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        # The session renews the models-endpoint cache in the background at start.
        await wait_for(pilot, lambda: read_listing(aistack_home, "anthropic") is not None)
        screen = await open_picker(pilot)
        await wait_for(pilot, lambda: len(offered(screen)) > 1)
        models = offered(screen)
        assert models[0] == MODEL
        assert models[1:] == [f"anthropic/{m}" for m in LISTED]
        # Only providers with a key: the old fixed list offered OpenAI and Google anyway.
        assert not [m for m in models if not m.startswith("anthropic/")]


async def test_choosing_a_model_in_the_picker_switches_to_it(
    make_app, fake_llm: FakeLLMServer, aistack_home: Path
) -> None:
    fake_llm.set_models("anthropic", catalogues_from_ids(LISTED)["anthropic"])
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await wait_for(pilot, lambda: read_listing(aistack_home, "anthropic") is not None)
        screen = await open_picker(pilot)
        await wait_for(pilot, lambda: "anthropic/claude-picker-gamma-3" in offered(screen))
        options = screen.query_one("#model-list", OptionList)
        options.highlighted = offered(screen).index("anthropic/claude-picker-gamma-3")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.model == "anthropic/claude-picker-gamma-3")
        assert app.screen is app.main
        assert app.query_one(StatusBar).state.model == "anthropic/claude-picker-gamma-3"
