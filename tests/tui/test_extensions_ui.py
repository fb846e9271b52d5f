"""Pilot tests of the extensions in the TUI: the trust dialog, MCP status and `/mcp`,
`Task` subagent cards, and a PreToolUse hook blocking `rm`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aistack_tui.tui.screens.question import TrustScreen
from aistack_tui.tui.widgets.entries import ToolEntry
from aistack_tui.tui.widgets.status_bar import StatusBar
from aistack_tui.tui.widgets.tool_card import ToolCard, children_shown
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import screen_text, wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send
from tests.tui.test_session_commands import command, notices

FAKES = Path(__file__).resolve().parents[2] / "fakes"


def project_with_code(repo: Path, *, dead_server: bool = False) -> None:
    """A `.mcp.json` with the fake MCP server over stdio, and a project PreToolUse hook
    that leaves a marker file whenever a tool is about to run."""
    servers = {"fixture": {"command": sys.executable,
                           "args": [str(FAKES / "mcp_server.py"), "stdio"]}}
    if dead_server:
        servers["dead"] = {"command": sys.executable, "args": [str(FAKES / "mcp_exit.py")]}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (repo / ".aistack").mkdir()
    hook = {"matcher": "*", "hooks": [{"type": "command", "command": "touch hook-ran"}]}
    (repo / ".aistack" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))


def read_turns() -> list[Turn]:
    return [Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]), Turn(text="Read.")]


async def test_trusting_the_project_runs_its_servers_and_hooks_and_is_remembered(
    make_app, git_repo: Path, aistack_home: Path
) -> None:
    project_with_code(git_repo, dead_server=True)
    app = make_app(*read_turns())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_screen(pilot, TrustScreen)
        await wait_for(pilot, lambda: "fixture" in screen_text(app))
        shown = screen_text(app)
        assert "MCP server fixture" in shown and "mcp_server.py" in shown
        assert "hooks in" in shown and "PreToolUse" in shown
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session is not None)
        status = app.screen.query_one(StatusBar)
        await wait_for(pilot, lambda: status.state.mcp == "1/2 ✗1", timeout=20)
        await wait_for(pilot, lambda: any("MCP server dead failed" in n for n in notices(app)))
        listing = await command(pilot, "/mcp", "MCP servers:")
        assert "● fixture  connected" in listing and "echo" in listing
        assert "✗ dead  failed" in listing
        await command(pilot, "/mcp reconnect fixture", "MCP server fixture connected", 20)
        await command(pilot, "/mcp reconnect nope", "No MCP server 'nope'")
        await type_and_send(pilot, "read it")
        await wait_for(pilot, lambda: answered(app, "Read."))
        assert (git_repo / "hook-ran").exists()
    assert (aistack_home / "trusted-projects.json").exists()
    again = make_app()
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: again.session is not None)  # no dialog this time
        assert not isinstance(again.screen, TrustScreen)


async def test_declining_trust_skips_servers_and_hooks(make_app, git_repo: Path) -> None:
    project_with_code(git_repo)
    app = make_app(*read_turns())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_screen(pilot, TrustScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.session is not None)
        assert app.session.extensions.mcp is None
        await wait_for(pilot, lambda: any("not trusted" in n for n in notices(app)))
        await type_and_send(pilot, "read it")
        await wait_for(pilot, lambda: answered(app, "Read."))
        assert not (git_repo / "hook-ran").exists()
        assert app.screen.query_one(StatusBar).state.mcp == ""


async def test_task_card_nests_its_subagent_calls(make_app, fake_llm: FakeLLMServer) -> None:
    app = make_app(
        Turn(tool_calls=[ToolCall("Task", {"description": "scan the repo",
                                           "prompt": "Read README.md and report."})]),
        Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),  # the subagent
        Turn(text="The readme is a title."),  # the subagent's final report
        Turn(text="All done."),
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "delegate it")
        await wait_for(pilot, lambda: answered(app, "All done."))
        cards = [e for e in entries(app) if isinstance(e, ToolEntry)]
        assert [c.name for c in cards] == ["Task"]  # the child's Read is not top-level
        task = cards[0]
        assert task.state == "done"
        assert [(c.name, c.state) for c in task.children] == [("Read", "done")]
        assert "README.md" in task.children[0].summary
        assert task.child_end == "done after 2 turns"
        assert not children_shown(task)  # folded once finished
        assert "1 step" in screen_text(app)
        card = app.screen.query_one(ToolCard)
        card.focus()
        await pilot.press("enter")
        # painted once the expanded card is laid out (a frame or more on a busy machine)
        await wait_for(pilot, lambda: "│ ✓ Read" in screen_text(app))
        shown = screen_text(app)
        assert "│ ✓ Read" in shown and "└ done after 2 turns" in shown
        assert "The readme is a title." in shown  # the result, in the expanded body


async def test_pre_tool_use_hook_blocks_rm_and_the_card_says_why(
    make_app, git_repo: Path, aistack_home: Path, fake_llm: FakeLLMServer
) -> None:
    (git_repo / "keep.txt").write_text("precious\n")
    script = git_repo.parent / "block_rm.py"
    script.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        "if event['tool_input'].get('command', '').startswith('rm'):\n"
        "    print('rm is not allowed here', file=sys.stderr)\n"
        "    sys.exit(2)\n")
    hook = {"matcher": "Bash", "hooks": [{"type": "command",
                                          "command": f"{sys.executable} {script}"}]}
    (aistack_home / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    app = make_app(Turn(tool_calls=[ToolCall("Bash", {"command": "rm keep.txt"})]),
                   Turn(text="It was blocked."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        assert not isinstance(app.screen, TrustScreen)  # user settings need no trust
        await type_and_send(pilot, "delete keep.txt")
        await wait_for(pilot, lambda: answered(app, "It was blocked."))
        card = next(e for e in entries(app) if isinstance(e, ToolEntry))
        assert card.state == "denied"
        assert "rm is not allowed here" in card.note
        assert "⊘ Bash" in screen_text(app) and "rm is not allowed here" in screen_text(app)
    assert (git_repo / "keep.txt").read_text() == "precious\n"
    assert "rm is not allowed here" in json.dumps(fake_llm.model_requests[-1].body)
