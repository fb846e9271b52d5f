"""The command-line options the Claude Agent SDK turns its `ClaudeAgentOptions` into,
driven through the real `claude-agent-sdk` (see test_agent_sdk.py): every one is either
honoured or refused with an error that names it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeSDKClient,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    ToolPermissionContext,
    query,
)

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import run_aistack
from tests.e2e.test_agent_sdk import BUGGY, fast_retries, options

pytestmark = pytest.mark.slow
__all__ = ["fast_retries"]  # the autouse fixture, shared


def offered(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


async def run(server: FakeLLMServer, cwd: Path, prompt: str = "hi", **more: Any) -> list[Message]:
    return [m async for m in query(prompt=prompt, options=options(server, cwd, **more))]


async def test_disallowed_tools_are_not_offered(git_repo: Path) -> None:
    with FakeLLMServer([Turn(text="ok")]) as server:
        messages = await run(server, git_repo, disallowed_tools=["Write", "WebFetch",
                                                                  "Bash(rm:*)"])
        body = server.model_requests[0].body
    init = messages[0]
    assert isinstance(init, SystemMessage)
    for name in ("Write", "WebFetch"):
        assert name not in offered(body) and name not in init.data["tools"]
    # A rule about some calls only leaves the tool offered: the rest of its calls run.
    assert "Bash" in offered(body) and "Edit" in offered(body)


async def test_tools_option_is_the_builtin_tool_set(git_repo: Path) -> None:
    with FakeLLMServer([Turn(text="ok"), Turn(text="ok")]) as server:
        await run(server, git_repo, tools=["Read", "Grep"])
        await run(server, git_repo, tools=[])
        listed, none = (r.body for r in server.model_requests)
    assert offered(listed) == ["Read", "Grep"]
    assert offered(none) == []


async def test_skills_and_setting_sources_are_accepted_and_choose_the_files(
    git_repo: Path,
) -> None:
    claude = git_repo / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Write"]}}))
    with FakeLLMServer([Turn(text="ok"), Turn(text="ok")]) as server:
        # skills= makes the SDK pass --setting-sources=user,project (and Skill allowed).
        with_project = await run(server, git_repo, skills="all")
        user_only = await run(server, git_repo, setting_sources=["user"])
        first, second = (r.body for r in server.model_requests)
    for messages in (with_project, user_only):
        result = messages[-1]
        assert isinstance(result, ResultMessage) and not result.is_error
    assert "Write" not in offered(first)  # the project's deny rule was read
    assert "Write" in offered(second)  # the project's file was not


async def test_session_id_fallback_model_and_thinking(git_repo: Path) -> None:
    chosen = str(uuid.uuid4())
    with FakeLLMServer([Turn(text="ok")]) as server:
        messages = await run(
            server, git_repo, session_id=chosen, fallback_model="claude-haiku-4-5",
            thinking={"type": "enabled", "budget_tokens": 2048},
        )
        body = server.model_requests[0].body
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert result.session_id == chosen
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


async def test_adaptive_and_disabled_thinking_are_accepted(git_repo: Path) -> None:
    with FakeLLMServer([Turn(text="ok"), Turn(text="ok")]) as server:
        for thinking in ({"type": "adaptive"}, {"type": "disabled"}):
            messages = await run(server, git_repo, thinking=thinking, max_thinking_tokens=4096)
            result = messages[-1]
            assert isinstance(result, ResultMessage) and not result.is_error
        adaptive, disabled = (r.body for r in server.model_requests)
    assert "thinking" not in disabled
    assert "thinking" not in adaptive  # the model's own default: no budget is sent


def test_an_unknown_flag_is_named(git_repo: Path) -> None:
    done = run_aistack(["-p", "--future-flag=1", "--betas", "x", "hi"], cwd=git_repo)
    assert done.returncode == 2
    assert "unknown options --future-flag, --betas" in done.stderr
    bad = run_aistack(["-p", "--setting-sources=user,team", "hi"], cwd=git_repo)
    assert bad.returncode == 2 and "team" in bad.stderr


async def test_dont_ask_denies_what_would_ask_without_asking(git_repo: Path) -> None:
    (git_repo / "calc.py").write_text(BUGGY)
    edit = ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                             "new_string": "a + b"})
    asked: list[str] = []

    async def can_use_tool(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext,
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append(name)
        return PermissionResultAllow()

    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
              Turn(tool_calls=[edit]), Turn(text="Could not edit.")]
    messages: list[Message] = []
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, permission_mode="dontAsk", can_use_tool=can_use_tool)
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("fix calc.py")
            messages = [m async for m in client.receive_response()]
    assert asked == []  # dontAsk never puts a call to the client
    assert (git_repo / "calc.py").read_text() == BUGGY
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert [d["tool_name"] for d in result.permission_denials or []] == ["Edit"]
