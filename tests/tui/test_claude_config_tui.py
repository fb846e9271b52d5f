"""Pilot tests: a project configured only for Claude Code, in the TUI after trust, and its
`.claude/commands/` as slash commands (in /help and the menu, sent as the prompt, their
`allowed-tools` allowed for that prompt only)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import OptionList

from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.screens.question import TrustScreen
from aistack_tui.tui.widgets.entries import ToolEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.test_claude_config import CALLS, claude_code_project
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send
from tests.tui.test_session_commands import notices
from tests.tui.test_trust_dialog import dialog_text


async def menu_for(pilot, typed: str) -> list[str]:
    """What the slash menu offers after typing `typed` into an empty prompt."""
    prompt = pilot.app.query_one(PromptInput)
    prompt.focus()
    await pilot.press(*typed)
    await pilot.pause()
    options = pilot.app.screen.query_one("#completions", OptionList)
    offered = [str(options.get_option_at_index(i).id) for i in range(options.option_count)]
    prompt.load_text("")
    await pilot.pause()
    return offered


async def test_claude_code_settings_apply_in_the_tui_after_trust(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    claude_code_project(git_repo)
    app = make_app(Turn(tool_calls=list(CALLS)), Turn(text="All set."))
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_screen(pilot, TrustScreen)
        text = dialog_text(app)
        assert "allow rule Edit(./docs/**)" in text
        assert "hooks in .claude/settings.json" in text and "guard.py" in text
        assert "TEAM_MARKER=from-claude-settings" in text
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "set things up")
        # Every call is decided by a rule or the hook: no confirm dialog opens.
        await wait_for(pilot, lambda: answered(app, "All set.")
                       or isinstance(app.screen, ConfirmScreen), timeout=30)
        assert not isinstance(app.screen, ConfirmScreen)
        told = json.dumps(fake_llm.model_requests[-1].body)
    assert (git_repo / "made-by-rule.txt").exists()
    assert (git_repo / "docs" / "ok.md").read_text() == "fine\n"
    assert not (git_repo / "docs" / "protected.txt").exists()
    assert not (git_repo / "docs" / "blocked.txt").exists()
    assert "protected.txt is read-only by team policy" in told
    assert "blocked.txt may not be written (exit 2)" in told
    assert "PRIVATE-NOTES-7788" not in told and "ENV-SECRET-5566" not in told
    assert "from-claude-settings" in told
    events = (git_repo / "hook-events.jsonl").read_text().splitlines()
    assert len(events) == 3  # the three Writes (matcher Edit|Write), nothing else


def write_command(repo: Path) -> None:
    folder = repo / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "mkfile.md").write_text(
        "---\n"
        "description: Create an empty file\n"
        "argument-hint: [name]\n"
        "allowed-tools: Bash(touch from-command.txt)\n"
        "---\n"
        "Please create the file $1 with touch.\n")
    (folder / "help.md").write_text("A file that tries to replace /help.\n")


async def test_a_claude_command_is_listed_sent_and_allowed_only_for_its_prompt(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    write_command(git_repo)
    touch = ToolCall("Bash", {"command": "touch from-command.txt"})
    app = make_app(Turn(tool_calls=[touch]), Turn(text="Created."),
                   Turn(tool_calls=[touch]), Turn(text="Again."))
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_screen(pilot, TrustScreen)
        assert "allowed-tools of command mkfile" in dialog_text(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session is not None)
        await wait_for(pilot, lambda: app.commands.get("mkfile") is not None)
        assert any("/help is a built-in command" in n for n in notices(app))
        # In the slash menu, with its description.
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: any("/mkfile [name]" in n for n in notices(app)))
        listed = next(n for n in notices(app) if "/mkfile [name]" in n)
        assert "/mkfile [name] — Create an empty file" in listed
        assert "/mkfile" in await menu_for(pilot, "/mkf")
        # Sent as the prompt, arguments filled in; its allowed-tools need no dialog.
        await type_and_send(pilot, "/mkfile from-command.txt")
        await wait_for(pilot, lambda: answered(app, "Created.")
                       or isinstance(app.screen, ConfirmScreen), timeout=20)
        assert not isinstance(app.screen, ConfirmScreen)
        assert (git_repo / "from-command.txt").exists()
        sent = json.dumps(fake_llm.model_requests[0].body["messages"])
        assert "Please create the file from-command.txt with touch." in sent
        assert "$1" not in sent
        # The next plain prompt is not covered by the command's allowed-tools.
        (git_repo / "from-command.txt").unlink()
        await type_and_send(pilot, "once more")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("n", "enter")  # no, and go on
        await wait_for(pilot, lambda: answered(app, "Again."), timeout=20)
        assert not (git_repo / "from-command.txt").exists()
        cards = [e for e in entries(app) if isinstance(e, ToolEntry) and e.name == "Bash"]
        assert len(cards) == 2


async def test_an_untrusted_projects_command_runs_without_its_allowed_tools(
    make_app, git_repo: Path
) -> None:
    write_command(git_repo)
    touch = ToolCall("Bash", {"command": "touch from-command.txt"})
    app = make_app(Turn(tool_calls=[touch]), Turn(text="Asked."))
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_screen(pilot, TrustScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.commands.get("mkfile") is not None)
        await type_and_send(pilot, "/mkfile from-command.txt")
        await wait_for_screen(pilot, ConfirmScreen)  # the rule was withheld: it asks
        await pilot.press("n", "enter")  # no, and go on
        await wait_for(pilot, lambda: answered(app, "Asked."), timeout=20)
    assert not (git_repo / "from-command.txt").exists()
