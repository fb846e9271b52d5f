"""The prompt a person types in all day: pasting, history, search, focus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual import events
from textual.widgets import OptionList

from aistack_tui.session.history import HISTORY_FILE
from aistack_tui.tui.screens.history_search import HistorySearchScreen
from aistack_tui.tui.widgets.entries import UserEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from aistack_tui.tui.widgets.tool_card import FOCUS_MARK, ToolCard
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import screen_text, wait_for, wait_for_screen
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


# --- focus --------------------------------------------------------------------------------


async def run_with_a_card(pilot) -> ToolCard:
    app = pilot.app
    prompt = await ready(pilot)
    prompt.load_text("read it")
    await pilot.press("enter")
    await wait_for(pilot, lambda: answered(app, "Read."))
    await pilot.pause()
    return app.query_one(ToolCard)


def card_turns() -> list[Turn]:
    return [Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]), Turn(text="Read.")]


async def test_typing_after_tab_to_a_card_goes_back_to_the_prompt(make_app) -> None:
    app = make_app(*card_turns())
    async with app.run_test(size=(100, 30)) as pilot:
        card = await run_with_a_card(pilot)
        prompt = app.query_one(PromptInput)
        await pilot.press("tab")
        assert app.focused is card
        await pilot.press("h", "i")
        assert app.focused is prompt
        assert prompt.text == "hi"


async def test_typing_after_clicking_a_card_goes_back_to_the_prompt(make_app) -> None:
    app = make_app(*card_turns())
    async with app.run_test(size=(100, 30)) as pilot:
        card = await run_with_a_card(pilot)
        prompt = app.query_one(PromptInput)
        await pilot.click(ToolCard)
        await pilot.pause()
        assert app.focused is card and card.entry.expanded
        await pilot.press("o", "k")
        assert app.focused is prompt
        assert prompt.text == "ok"


async def test_the_focused_card_is_marked_even_without_colour(make_app) -> None:
    app = make_app(*card_turns())
    async with app.run_test(size=(100, 30)) as pilot:
        card = await run_with_a_card(pilot)

        def card_row() -> str:
            lines = screen_text(app).splitlines()
            return lines[card.region.y]

        unfocused = card_row()
        card.focus()
        await pilot.pause()
        focused = card_row()
        assert focused.strip() != unfocused.strip()
        assert FOCUS_MARK in focused and FOCUS_MARK not in unfocused
