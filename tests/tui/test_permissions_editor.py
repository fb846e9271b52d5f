"""`/permissions add`: an allow, ask or deny rule added to a chosen layer, checked as the
settings loader checks rules, in force at once, its file otherwise kept (issue 22 item 14)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, Static

from aistack_tui.tui.screens.rule_editor import RuleEditorScreen
from aistack_tui.tui.widgets.entries import ToolEntry
from fakes.fake_llm import ToolCall, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send
from tests.tui.test_session_commands import command, notices

RM = [Turn(tool_calls=[ToolCall("Bash", {"command": "rm -f a.txt"})]), Turn(text="Tried.")]


async def test_the_dialog_adds_a_deny_rule_to_the_project_file_and_it_holds_at_once(
    make_app, git_repo: Path
) -> None:
    settings = git_repo / ".aistack" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Read(./secret.txt)"]},
                                    "x-team-note": "keep me"}))
    (git_repo / "a.txt").write_text("keep\n")
    app = make_app(*RM)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/permissions add")
        editor = await wait_for_screen(pilot, RuleEditorScreen)
        editor.choose("deny", "project")
        await pilot.press(*"Bash(rm:*)", "enter")
        await wait_for(pilot, lambda: app.screen is app.main and any(
            "Added deny Bash(rm:*) to .aistack/settings.json" in n for n in notices(app)))
        listing = await command(pilot, "/permissions", "Permission mode")
        assert "deny   Bash(rm:*)" in listing
        await type_and_send(pilot, "remove a.txt")
        await wait_for(pilot, lambda: answered(app, "Tried."))
        card = next(e for e in entries(app) if isinstance(e, ToolEntry))
        assert card.state == "denied"
    assert (git_repo / "a.txt").exists()
    data = json.loads(settings.read_text())
    assert data["permissions"]["deny"] == ["Read(./secret.txt)", "Bash(rm:*)"]
    assert data["x-team-note"] == "keep me"


async def test_a_rule_the_loader_would_refuse_keeps_the_dialog_open_with_the_reason(
    make_app, git_repo: Path
) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "/permissions add")
        editor = await wait_for_screen(pilot, RuleEditorScreen)
        await pilot.press(*"Bash(npm test", "enter")
        error = editor.query_one("#rule-error", Static)
        await wait_for(pilot, lambda: "✗" in str(error.render()))
        assert app.screen is editor
        assert editor.query_one(Input).value == "Bash(npm test"  # nothing typed is lost
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main)
    assert not (git_repo / ".aistack" / "settings.local.json").exists()


async def test_the_typed_form_adds_to_the_local_file_keeping_its_other_keys(
    make_app, git_repo: Path
) -> None:
    local = git_repo / ".aistack" / "settings.local.json"
    local.parent.mkdir()
    # Only narrowing rules and a key of its own: the project needs no trust to start.
    local.write_text(json.dumps({"permissions": {"ask": ["Bash(git push:*)"]}, "x": [1]}))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await command(pilot, "/permissions add allow local Bash(npm run test:*)",
                      "Added allow Bash(npm run test:*) to .aistack/settings.local.json")
        await command(pilot, "/permissions add maybe local X", "Usage: /permissions add")
        await command(pilot, "/permissions add allow user Bash(", "Not added:")
    data = json.loads(local.read_text())
    assert data == {"permissions": {"ask": ["Bash(git push:*)"],
                                    "allow": ["Bash(npm run test:*)"]}, "x": [1]}


async def test_a_session_deny_rule_holds_until_quit_and_writes_no_file(
    make_app, git_repo: Path, isolated_env: Path
) -> None:
    (git_repo / "a.txt").write_text("keep\n")
    app = make_app(*RM, permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await command(pilot, "/permissions add deny session Bash(rm:*)",
                      "Added deny Bash(rm:*) to this session")
        listing = await command(pilot, "/permissions", "Permission mode")
        assert "session rules — this session" in listing
        await type_and_send(pilot, "remove a.txt")
        await wait_for(pilot, lambda: answered(app, "Tried."))
        card = next(e for e in entries(app) if isinstance(e, ToolEntry))
        assert card.state == "denied"
    assert not (git_repo / ".aistack" / "settings.local.json").exists()
    assert not (isolated_env / "settings.json").exists()
