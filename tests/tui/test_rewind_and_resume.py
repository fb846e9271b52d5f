"""Esc Esc on an empty prompt opens the rewind list, and the /resume picker shows dates
and the first prompt (issue 22 item 15)."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from textual.widgets import OptionList

from aistack_tui.sessions.models import SessionInfo
from aistack_tui.tui.screens.rewind import RewindPickerScreen
from aistack_tui.tui.screens.sessions import SessionPickerScreen, when
from aistack_tui.tui.widgets.entries import UserEntry
from fakes.fake_llm import Turn
from tests.tui.conftest import screen_text, wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send
from tests.tui.test_session_commands import TWO_WRITES, notices, send_two_writes


async def test_esc_esc_on_an_empty_prompt_rewinds_the_chosen_turn(
    make_app, git_repo: Path
) -> None:
    app = make_app(*TWO_WRITES, permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await send_two_writes(pilot)
        await pilot.press("escape", "escape")
        picker = await wait_for_screen(pilot, RewindPickerScreen)
        options = picker.query_one(OptionList)
        assert "write two" in str(options.get_option_at_index(0).prompt)  # newest first
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("restored" in n or "removed" in n
                                          for n in notices(app)))
        assert (git_repo / "one.txt").exists() and not (git_repo / "two.txt").exists()
        assert [e.text for e in entries(app) if isinstance(e, UserEntry)] == ["write one"]
        assert app.prompt.text == "write two"  # to edit and resend


async def test_esc_esc_with_text_in_the_prompt_opens_nothing(make_app) -> None:
    app = make_app(*TWO_WRITES, permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await send_two_writes(pilot)
        app.prompt.load_text("draft")
        await pilot.press("escape", "escape")
        await pilot.pause(0.2)
        assert app.screen is app.main and app.prompt.text == "draft"


async def test_esc_esc_with_nothing_to_rewind_says_so(make_app) -> None:
    app = make_app(Turn(text="Just talk."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: answered(app, "Just talk."))
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: any("nothing to rewind" in n for n in notices(app)))
        assert app.screen is app.main


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(text: str) -> float:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC).timestamp()


def test_dates_are_as_short_as_now_allows(utc) -> None:
    now = at("2026-11-26 15:00")
    assert when(at("2026-11-26 09:05"), now) == "today 09:05"
    assert when(at("2026-11-25 23:59"), now) == "yesterday 23:59"
    assert when(at("2026-03-02 08:00"), now) == "2 Mar 08:00"
    assert when(at("2025-12-31 08:00"), now) == "2025-12-31"


async def test_the_resume_picker_shows_dates_and_first_prompts(make_app, utc) -> None:
    """Dates against an injected now, so the screen is the same in every run."""
    def info(sid: str, title: str, updated: str) -> SessionInfo:
        return SessionInfo(id=sid, project_root="/p", created_at=at(updated),
                           updated_at=at(updated), title=title, model="anthropic/m",
                           message_count=4)

    sessions = [info("aaaaaaaa1", "Fix the parser", "2026-11-26 14:02"),
                info("bbbbbbbb2", "add a --verbose flag", "2026-11-20 09:30")]
    prompts = {"aaaaaaaa1": "the parser crashes on empty input, please fix it",
               "bbbbbbbb2": "add a --verbose flag"}
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        app.push_screen(SessionPickerScreen(sessions, "", prompts, now=at("2026-11-26 18:00")))
        await wait_for_screen(pilot, SessionPickerScreen)
        text = screen_text(app)
    assert "today 14:02" in text and "Fix the parser" in text
    assert "› the parser crashes on empty input, please fix it" in text
    assert "20 Nov 09:30" in text
    assert "› add a --verbose flag" not in text  # the title already is the first prompt


async def test_resume_lists_the_first_prompt_of_a_titled_session(make_app) -> None:
    first = make_app(Turn(text="Hi."))
    async with first.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: first.session is not None)
        await type_and_send(pilot, "remember the first prompt")
        await wait_for(pilot, lambda: answered(first, "Hi."))
        await first.session.store.set_title(first.session.session_id, "A model's title")
    app = make_app(resume="")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_screen(pilot, SessionPickerScreen)
        text = screen_text(app)
    assert "A model's title" in text and "› remember the first prompt" in text
    assert "today " in text
