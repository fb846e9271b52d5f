"""Claude Code's headless flags on the real `aistack` script: through the Claude Agent SDK
(which builds the command line) and directly as a subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    Message,
    ResultMessage,
    SystemMessage,
    query,
)

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, run_aistack, write_user_settings
from tests.e2e.test_agent_sdk import BUGGY, options

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def fast_retries(aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False})


async def test_settings_and_add_dir_reach_the_permission_engine(
    git_repo: Path, tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("ship it\n")
    (git_repo / ".env").write_text("TOKEN=1\n")
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": str(notes / "todo.txt")}),
                               ToolCall("Bash", {"command": "git status"})]),
              Turn(text="done")]
    settings = json.dumps({"permissions": {"deny": ["Bash(git status)"]}})
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, settings=settings, add_dirs=[notes])
        messages = [m async for m in query(prompt="look around", options=opts)]
        last = json.dumps(server.model_requests[-1].body["messages"])
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "done"
    # The added directory is readable without a prompt; the --settings deny rule held.
    assert "ship it" in last
    assert [d["tool_name"] for d in result.permission_denials or []] == ["Bash"]


async def test_sdk_mcp_servers_dict_starts_those_servers(git_repo: Path) -> None:
    server_file = Path(__file__).resolve().parents[2] / "fakes" / "mcp_server.py"
    servers = {"fake": {"command": sys.executable, "args": [str(server_file), "stdio"]}}
    script = [Turn(tool_calls=[ToolCall("mcp__fake__echo", {"text": "via the SDK"})]),
              Turn(text="echoed")]
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, mcp_servers=servers,
                       allowed_tools=["mcp__fake__echo"])
        messages = [m async for m in query(prompt="echo it", options=opts)]
        last = json.dumps(server.model_requests[-1].body["messages"])
    init = messages[0]
    assert isinstance(init, SystemMessage)
    assert init.data["mcp_servers"] == [{"name": "fake", "status": "connected"}]
    assert "mcp__fake__echo" in init.data["tools"]
    assert "echo: via the SDK" in last


async def test_client_switches_mode_and_model_between_turns(git_repo: Path) -> None:
    (git_repo / "calc.py").write_text(BUGGY)
    script = [Turn(text="ready"),
              Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
              Turn(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                                                 "new_string": "a + b"})]),
              Turn(text="fixed")]
    first: list[Message] = []
    second: list[Message] = []
    with FakeLLMServer(script) as server:
        async with ClaudeSDKClient(options=options(server, git_repo)) as client:
            await client.query("hello")
            first = [m async for m in client.receive_response()]
            await client.set_permission_mode("acceptEdits")
            await client.set_model("claude-haiku-4-5")
            await client.query("fix calc.py")
            second = [m async for m in client.receive_response()]
        models = [r.body["model"] for r in server.model_requests]
    ready = first[-1]
    assert isinstance(ready, ResultMessage) and ready.result == "ready"
    init = next(m for m in second if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["permission_mode"] == "acceptEdits"
    assert models == ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-haiku-4-5",
                      "claude-haiku-4-5"]
    assert {m.model for m in second if isinstance(m, AssistantMessage)} == {"claude-haiku-4-5"}
    assert (git_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_dangerously_skip_permissions_is_bypass_mode(git_repo: Path) -> None:
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]),
              Turn(text="made")]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "make a file", "--dangerously-skip-permissions",
                            "--model", "anthropic/claude-sonnet-4-6", "--output-format", "json"],
                           cwd=git_repo, env=server.env("anthropic"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["permission_denials"] == []
    assert (git_repo / "made.txt").exists()


def test_one_shot_stream_json_with_partial_messages(git_repo: Path) -> None:
    with FakeLLMServer([Turn(text="partial pieces", chunk_size=3)]) as server:
        proc = run_aistack(["-p", "go", "--output-format", "stream-json",
                            "--include-partial-messages", "--model",
                            "anthropic/claude-sonnet-4-6"],
                           cwd=git_repo, env=server.env("anthropic"))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    deltas = [line["event"]["delta"]["text"] for line in lines
              if line["type"] == "stream_event"
              and line["event"]["type"] == "content_block_delta"]
    assert "".join(deltas) == "partial pieces" and len(deltas) > 1
    assert [line["type"] for line in lines if line["type"] != "stream_event"] == [
        "system", "assistant", "result"]


@pytest.mark.parametrize(("args", "says"), [
    (["--input-format", "stream-json"], "needs --output-format stream-json"),
    (["--output-format", "stream-json", "--permission-prompt-tool", "stdio"],
     "needs --input-format stream-json"),
    (["--input-format", "stream-json", "--output-format", "stream-json",
      "--permission-prompt-tool", "mcp__auth__prompt"], "only 'stdio' is supported"),
    (["--include-partial-messages"], "needs --output-format stream-json"),
    (["--dangerously-skip-permissions", "--permission-mode", "plan"], "contradicts"),
    (["--input-format", "stream-json", "--output-format", "stream-json", "a prompt"],
     "prompts come on stdin"),
    (["--settings", "{broken", "-p", "x"], "--settings: malformed JSON"),
    (["--setting-sources=user,team", "-p", "x"], "--setting-sources: unknown source(s) team"),
    (["--betas=x", "-p", "x"], "unknown option --betas"),
    (["--session-id", "not-a-uuid", "-p", "x"], "is not a UUID"),
    (["--replay-user-messages", "-p", "x"], "needs --input-format stream-json"),
    (["--mcp-config", '{"mcpServers": ', "-p", "x"], "--mcp-config: malformed JSON"),
])
def test_flag_mistakes_exit_2_with_one_line(git_repo: Path, args: list[str], says: str) -> None:
    proc = run_aistack(args, cwd=git_repo)
    assert proc.returncode == 2
    assert says in proc.stderr and proc.stderr.count("\n") == 1
    assert proc.stdout == ""


def test_stream_json_input_without_the_sdk(git_repo: Path) -> None:
    """The wire itself: a user line and a control line on stdin, JSON lines out."""
    stdin = "\n".join(json.dumps(line) for line in [
        {"type": "control_request", "request_id": "r1",
         "request": {"subtype": "initialize", "hooks": None}},
        {"type": "user", "message": {"role": "user", "content": "hi"}},
    ]) + "\n"
    with FakeLLMServer([Turn(text="hello back")]) as server:
        proc = run_aistack(["--input-format", "stream-json", "--output-format", "stream-json",
                            "--verbose", "--model", "claude-sonnet-4-6"],
                           cwd=git_repo, env=server.env("anthropic"), stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == "control_response"
    assert lines[0]["response"]["request_id"] == "r1"
    assert [line["type"] for line in lines[1:]] == ["system", "assistant", "result"]
    assert lines[-1]["result"] == "hello back"
