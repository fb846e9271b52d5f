"""The prompt a person types in all day: pasting, history, search, focus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual import events
from textual.widgets import OptionList

from aistack_tui.tui.screens.history_search import HistorySearchScreen
from aistack_tui.tui.widgets.entries import UserEntry
from aistack_tui.tui.widgets.prompt_input import HISTORY_FILE, PromptInput
from tests.fakes.fake_llm import FakeLLMServer, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries


async def ready(pilot) -> PromptInput:
    await wait_for(pilot, lambda: pilot.app.session is not None)
    return pilot.app.query_one(PromptInput)


def sent_text(fake_llm: FakeLLMServer) -> str:
    """The text of the first user message the model received."""
    content = fake_llm.model_requests[0].body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


# --- pasting -------------------------------------------------------------------------------

LINES = [f"line {i}" for i in range(1, 61)]


@pytest.mark.parametrize(("ending", "trailing"), [("\r\n", True), ("\r", True), ("\n", True),
                                                  ("\r\n", False)])
async def test_multi_line_paste_keeps_its_lines_whatever_the_line_ends(
    make_app, fake_llm: FakeLLMServer, ending: str, trailing: bool
) -> None:
    app = make_app(Turn(text="Got it."))
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        pasted = ending.join(LINES) + (ending if trailing else "")
        app.post_message(events.Paste(pasted))
        await wait_for(pilot, lambda: "Pasted text" in prompt.text)
        assert prompt.text == "[Pasted text #1 +60 lines]"
        await pilot.press("enter")
        await wait_for(pilot, lambda: answered(app, "Got it."))
        expected = "\n".join(LINES)
        assert expected in sent_text(fake_llm)
        assert "\r" not in sent_text(fake_llm)
        shown = next(e for e in entries(app) if isinstance(e, UserEntry))
        assert expected in shown.text and "\r" not in shown.text


async def test_short_paste_with_carriage_returns_becomes_lines(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        app.post_message(events.Paste("one\r\ntwo\rthree"))
        await wait_for(pilot, lambda: "three" in prompt.text)
        assert prompt.text == "one\ntwo\nthree"


# --- history ----------------------------------------------------------------------------


def seed_history(home: Path, *items: str) -> None:
    (home / HISTORY_FILE).write_text("".join(json.dumps(i) + "\n" for i in items))


async def test_up_and_down_walk_every_entry_even_slash_commands(make_app,
                                                               aistack_home: Path) -> None:
    seed_history(aistack_home, "first question", "/cost", "/model openai/gpt-4.1", "last one")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        completions = app.screen.query_one("#completions", OptionList)
        prompt.load_text("my draft")
        seen = []
        for _ in range(4):
            await pilot.press("up")
            await pilot.pause()
            seen.append(prompt.text)
            assert not completions.display  # a recalled entry opens no menu
        assert seen == ["last one", "/model openai/gpt-4.1", "/cost", "first question"]
        back = []
        for _ in range(4):
            await pilot.press("down")
            await pilot.pause()
            back.append(prompt.text)
        assert back == ["/cost", "/model openai/gpt-4.1", "last one", "my draft"]


async def test_typing_after_recalling_a_command_opens_the_menu(make_app,
                                                               aistack_home: Path) -> None:
    seed_history(aistack_home, "/cost")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        completions = app.screen.query_one("#completions", OptionList)
        await pilot.press("up")
        await pilot.pause()
        assert prompt.text == "/cost" and not completions.display
        await pilot.press("backspace", "backspace", "backspace")
        await pilot.pause()
        assert prompt.text == "/c" and completions.display


async def test_ctrl_r_searches_the_history(make_app, aistack_home: Path) -> None:
    seed_history(aistack_home, "run the tests", "fix the parser", "explain the tests again",
                 "hello")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        await pilot.press("ctrl+r")
        screen = await wait_for_screen(pilot, HistorySearchScreen)
        await pilot.press(*"tests")
        await pilot.pause()
        shown = screen.matches()
        assert shown == ["explain the tests again", "run the tests"]  # newest first
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.screen is app.main)
        assert prompt.text == "run the tests"
        assert app.focused is prompt
        await pilot.press("ctrl+r")
        await wait_for_screen(pilot, HistorySearchScreen)
        await pilot.press(*"zzz", "escape")
        await wait_for(pilot, lambda: app.screen is app.main)
        assert prompt.text == "run the tests"  # Esc leaves the prompt as it was
