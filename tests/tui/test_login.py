"""`/login`: the next step a rejected key points to saves a new key the next request uses."""

from __future__ import annotations

import json
from pathlib import Path

from aistack_tui.session.config import save_credential
from aistack_tui.tui.screens.login import LoginScreen
from aistack_tui.tui.widgets.entries import NoticeEntry
from fakes.fake_llm import FakeLLMServer, Fault, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send


def last_notice(app) -> str:
    found = [e for e in entries(app) if isinstance(e, NoticeEntry)]
    return found[-1].text if found else ""


async def test_login_after_a_rejected_key_saves_the_key_the_next_request_uses(
    make_app, aistack_home: Path, monkeypatch, fake_llm: FakeLLMServer
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    save_credential(aistack_home, "anthropic", "old-key")
    app = make_app(Turn(text="Works now.", faults=[Fault("http", status=401)]))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: not app.busy and "/login" in last_notice(app))
        await type_and_send(pilot, "/login")
        await wait_for_screen(pilot, LoginScreen)
        await pilot.press(*"new-key", "enter")
        await wait_for(pilot, lambda: "Saved the key for Anthropic" in last_notice(app))
        await type_and_send(pilot, "hello again")
        await wait_for(pilot, lambda: answered(app, "Works now."))
    assert fake_llm.model_requests[0].api_key == "old-key"
    assert fake_llm.model_requests[-1].api_key == "new-key"
    credentials = aistack_home / "credentials.json"
    assert json.loads(credentials.read_text())["anthropic"] == "new-key"
    assert credentials.stat().st_mode & 0o777 == 0o600


async def test_login_says_when_the_environment_key_still_wins(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/login")
        await wait_for_screen(pilot, LoginScreen)
        await pilot.press(*"other-key", "enter")
        await wait_for(pilot, lambda: "ANTHROPIC_API_KEY is set" in last_notice(app))
