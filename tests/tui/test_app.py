"""Pilot tests of the whole app against the fake LLM server through the real SDK."""

from __future__ import annotations

import json
from pathlib import Path

from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.entries import AssistantEntry, ToolEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from aistack_tui.tui.widgets.status_bar import StatusBar
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import screen_text, wait_for, wait_for_screen


def entries(app):
    return app.query_one(Conversation).transcript.entries


def answered(app, text: str) -> bool:
    """The run is over and its last entry is the answer `text`."""
    last = entries(app)[-1] if entries(app) else None
    return not app.busy and isinstance(last, AssistantEntry) and last.text == text


async def type_and_send(pilot, text: str) -> None:
    prompt = pilot.app.query_one(PromptInput)
    prompt.load_text(text)
    await pilot.press("enter")


async def test_full_turn_streams_text_and_shows_a_tool_card(
    make_app, fake_llm: FakeLLMServer
) -> None:
    app = make_app(
        Turn(text="Let me look.", tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),
        Turn(text="The readme says **test repo**."),
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "what is in the readme?")
        await wait_for(pilot, lambda: not app.busy and len(entries(app)) >= 4)
        kinds = [type(e).__name__ for e in entries(app)]
        assert kinds == ["UserEntry", "AssistantEntry", "ToolEntry", "AssistantEntry"]
        card = entries(app)[2]
        assert isinstance(card, ToolEntry) and card.state == "done"
        assert "README.md" in card.summary
        answer = entries(app)[3]
        assert isinstance(answer, AssistantEntry) and answer.finished
        assert answer.text == "The readme says **test repo**."
        assert app.query_one(StatusBar).state.tokens > 0
        sent = fake_llm.model_requests[0].body["messages"][0]
        assert "what is in the readme?" in str(sent)


# --- the confirm dialog, end to end ------------------------------------------------------

SOURCE = "def f():\n    return 1\n"


def edit_turns(*more: Turn) -> list[Turn]:
    return [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "a.py"})]),
        Turn(text="Changing it.", tool_calls=[ToolCall(
            "Edit", {"file_path": "a.py", "old_string": "return 1", "new_string": "return 2"})]),
        *more,
    ]


async def run_to_dialog(pilot, prompt: str = "make f return 2") -> ConfirmScreen:
    app = pilot.app
    await wait_for(pilot, lambda: app.session is not None)
    await type_and_send(pilot, prompt)
    await wait_for_screen(pilot, ConfirmScreen)
    return app.screen


async def test_edit_dialog_shows_the_diff_and_yes_writes_the_file(make_app, git_repo) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Done.")))
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await run_to_dialog(pilot)
        assert dialog.request.tool_name == "Edit"
        text = screen_text(app)
        assert "-    return 1" in text and "+    return 2" in text
        assert (git_repo / "a.py").read_text() == SOURCE  # nothing written before yes
        await pilot.press("y")
        await wait_for(pilot, lambda: answered(app, "Done."))
        assert (git_repo / "a.py").read_text() == "def f():\n    return 2\n"


async def test_yes_for_the_session_does_not_ask_again(make_app, git_repo: Path) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    second = Turn(tool_calls=[ToolCall(
        "Edit", {"file_path": "a.py", "old_string": "def f", "new_string": "def g"})])
    app = make_app(*edit_turns(second, Turn(text="Both done.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await run_to_dialog(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: answered(app, "Both done."))
        assert (git_repo / "a.py").read_text() == "def g():\n    return 2\n"
        cards = [e for e in entries(app) if isinstance(e, ToolEntry) and e.name == "Edit"]
        assert [c.state for c in cards] == ["done", "done"]


async def test_yes_and_save_writes_the_rule_to_local_settings(make_app, git_repo: Path) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Saved.")))
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await run_to_dialog(pilot)
        rule = dialog.request.decision.suggested_rule
        assert rule
        await pilot.press("3")
        await wait_for(pilot, lambda: answered(app, "Saved."))
    local = json.loads((git_repo / ".aistack" / "settings.local.json").read_text())
    assert rule in local["permissions"]["allow"]
    assert (git_repo / "a.py").read_text() == "def f():\n    return 2\n"


async def test_edit_denied_with_message_reaches_model(make_app, git_repo: Path,
                                                      fake_llm: FakeLLMServer) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Understood.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await run_to_dialog(pilot)
        await pilot.press("4")
        for key in "use 3 instead":
            await pilot.press(key if key != " " else "space")
        await pilot.press("enter")
        await wait_for(pilot, lambda: answered(app, "Understood."))
        assert (git_repo / "a.py").read_text() == SOURCE
        last_request = fake_llm.model_requests[-1].body["messages"]
        assert "use 3 instead" in str(last_request[-1])
        card = [e for e in entries(app) if isinstance(e, ToolEntry) and e.name == "Edit"][0]
        assert card.state == "denied"
