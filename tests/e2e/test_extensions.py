"""Skills, MCP servers and hooks reaching the model in print mode (fake LLM server)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import run_aistack, write_user_settings

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"
FAKES = Path(__file__).resolve().parents[2] / "fakes"


def test_skill_catalogue_then_body_two_phase(git_repo: Path) -> None:
    skill = git_repo / ".aistack" / "skills" / "deploy-checklist"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy-checklist\ndescription: Steps to follow before deploying.\n---\n"
        "BODY-MARKER: run the smoke tests first.\n")
    (skill / "notes.md").write_text("extra\n")
    script = [Turn(tool_calls=[ToolCall("Skill", {"name": "deploy-checklist"})]),
              Turn(text="Following the checklist.")]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "deploy please", "--model", MODEL], cwd=git_repo,
                           env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        first, second = (json.dumps(r.body) for r in server.model_requests)
    assert "deploy-checklist" in first and "Steps to follow before deploying." in first
    assert "BODY-MARKER" not in first  # phase 1: name and description only
    assert "BODY-MARKER" in second and "notes.md" in second  # phase 2: the body and files


def test_mcp_stdio_server_tool_is_called(git_repo: Path) -> None:
    (git_repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"fixture": {
        "command": sys.executable, "args": [str(FAKES / "mcp_server.py"), "stdio"]}}}))
    script = [Turn(tool_calls=[ToolCall("mcp__fixture__echo", {"text": "hello mcp"})]),
              Turn(text="done")]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "call the tool", "--model", MODEL, "--output-format",
                            "stream-json", "--allowed-tools", "mcp__fixture", "--trust-project"],
                           cwd=git_repo, env=server.env("anthropic"), timeout=90)
        assert proc.returncode == 0, proc.stderr
        first = server.model_requests[0].body
        last = json.dumps(server.model_requests[-1].body)
    init = json.loads(proc.stdout.splitlines()[0])
    assert init["mcp_servers"] == [{"name": "fixture", "status": "connected"}]
    assert "mcp__fixture__echo" in [t["name"] for t in first["tools"]]
    assert "hello mcp" in last


def test_broken_mcp_server_is_reported_and_run_goes_on(git_repo: Path) -> None:
    (git_repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"dead": {
        "command": sys.executable, "args": [str(FAKES / "mcp_exit.py")]}}}))
    with FakeLLMServer([Turn(text="fine without it")]) as server:
        proc = run_aistack(["-p", "hi", "--model", MODEL, "--trust-project"], cwd=git_repo,
                           env=server.env("anthropic"), timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "fine without it"
    assert "MCP server dead failed" in proc.stderr


def test_untrusted_project_mcp_server_is_left_out_with_one_notice(git_repo: Path) -> None:
    (git_repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"fixture": {
        "command": sys.executable, "args": [str(FAKES / "mcp_server.py"), "stdio"]}}}))
    with FakeLLMServer([Turn(text="done")]) as server:
        proc = run_aistack(["-p", "hi", "--model", MODEL, "--output-format", "stream-json"],
                           cwd=git_repo, env=server.env("anthropic"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[0])["mcp_servers"] == []
    notice = [line for line in proc.stderr.splitlines() if "not trusted" in line]
    assert len(notice) == 1
    assert "MCP server fixture" in notice[0] and "--trust-project" in notice[0]


def test_pre_tool_use_hook_blocks_rm(git_repo: Path, aistack_home: Path) -> None:
    (git_repo / "keep.txt").write_text("precious\n")
    script_path = git_repo.parent / "block_rm.py"
    script_path.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        "if event['tool_input'].get('command', '').startswith('rm'):\n"
        "    print('rm is not allowed here', file=sys.stderr)\n"
        "    sys.exit(2)\n")
    hook = f"{sys.executable} {script_path}"
    write_user_settings(aistack_home, {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}})
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": "rm keep.txt"})]),
              Turn(text="blocked")]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "remove it", "--model", MODEL, "--permission-mode",
                            "bypassPermissions"], cwd=git_repo, env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        told = json.dumps(server.model_requests[-1].body)
    assert (git_repo / "keep.txt").exists()
    assert "rm is not allowed here" in told


def test_malformed_hooks_setting_is_fatal(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {"hooks": {"BeforeTool": []}})
    with FakeLLMServer([]) as server:
        proc = run_aistack(["-p", "hi", "--model", MODEL], cwd=git_repo,
                           env=server.env("anthropic"))
    assert proc.returncode == 2 and "BeforeTool" in proc.stderr
