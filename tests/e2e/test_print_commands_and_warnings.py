"""Print mode runs custom slash commands as the TUI does, and reports a broken .mcp.json
even when the turn ends before any MCP server would have started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import run_aistack

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"

COMMAND = """---
description: Write a greeting file
allowed-tools: Write(/greeting.txt)
argument-hint: NAME
---
Write a file greeting.txt that greets $ARGUMENTS.
"""


def first_user_text(body: dict) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(
        block.get("text", "") for block in content if block.get("type") == "text"
    )


def run_command(repo: Path, *extra: str) -> tuple[dict, str]:
    (repo / ".claude" / "commands").mkdir(parents=True)
    (repo / ".claude" / "commands" / "greet.md").write_text(COMMAND)
    script = [
        Turn(tool_calls=[ToolCall("Write", {"file_path": "greeting.txt", "content": "hi Ada\n"})]),
        Turn(text="Done."),
    ]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "/greet Ada", "--model", MODEL, "--output-format", "json",
                            *extra], cwd=repo, env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        sent = first_user_text(server.model_requests[0].body)
    return json.loads(proc.stdout), sent


def test_a_trusted_project_command_expands_and_its_allowed_tools_apply(git_repo: Path) -> None:
    result, sent = run_command(git_repo, "--trust-project")
    assert sent.startswith("Write a file greeting.txt that greets Ada.")
    assert result["permission_denials"] == []
    assert (git_repo / "greeting.txt").read_text() == "hi Ada\n"


def test_an_untrusted_project_command_expands_without_its_allowed_tools(git_repo: Path) -> None:
    result, sent = run_command(git_repo)
    assert "greets Ada" in sent
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Write"]
    assert not (git_repo / "greeting.txt").exists()


def test_a_broken_mcp_json_is_reported_in_a_fast_print_run(git_repo: Path) -> None:
    (git_repo / ".mcp.json").write_text('{"mcpServers": {"docs": {"command": "x",}}}\n')
    with FakeLLMServer([Turn(text="quick answer")]) as server:
        proc = run_aistack(["-p", "hi", "--model", MODEL], cwd=git_repo,
                           env=server.env("anthropic"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "quick answer"
    warning = [line for line in proc.stderr.splitlines() if ".mcp.json" in line]
    assert warning, proc.stderr
    assert ".mcp.json:1:" in warning[0] and "invalid JSON" in warning[0], warning


SHELL_COMMAND = """---
description: Review what changed
allowed-tools: Bash(git status:*), Bash(git diff:*)
---
Status: !`git status --short`
Diff stat: !`git diff --stat`
Not allowed: !`touch pwned.txt`
Read @README.md and the notes in @docs/notes.md, then review.
"""


def test_shell_lines_run_through_the_engine_and_mentions_attach_files(
    git_repo: Path, tmp_path: Path
) -> None:
    commands = tmp_path / "user-home" / ".claude" / "commands"  # HOME of every test
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(SHELL_COMMAND)
    (git_repo / "README.md").write_text("# test repo\nREADME-BODY\n")
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "notes.md").write_text("NOTES-BODY\n")
    with FakeLLMServer([Turn(text="Reviewed.")]) as server:
        proc = run_aistack(["-p", "/review", "--model", MODEL], cwd=git_repo,
                           env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        sent = json.dumps(server.model_requests[0].body["messages"][0])
    assert "Status:  M README.md" in sent and "?? docs/" in sent  # git status ran
    assert "1 file changed" in sent  # git diff --stat ran
    assert "`touch pwned.txt` was not run" in sent and not (git_repo / "pwned.txt").exists()
    assert "README-BODY" in sent and "NOTES-BODY" in sent  # @mentions attached
    assert "!`git status" not in sent
