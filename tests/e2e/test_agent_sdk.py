"""Programs written for Claude Code drive aistack: the real `claude-agent-sdk` with the
installed `aistack` console script as its `cli_path`, against the fake LLM server.

Every message below went through the SDK's own parser, and every control request
(initialize, interrupt, can_use_tool) through its own control protocol code.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    query,
)

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, write_user_settings

pytestmark = pytest.mark.slow

BUGGY = "def add(a, b):\n    return a - b\n"


def aistack_script() -> str:
    """The console script pip installed beside this interpreter (else the one on PATH)."""
    beside = Path(sys.executable).with_name("aistack")
    found = str(beside) if beside.exists() else shutil.which("aistack")
    assert found, "the aistack console script is not installed (pip install -e '.[test]')"
    return found


def options(server: FakeLLMServer, cwd: Path, **more: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cli_path=aistack_script(), cwd=cwd, env=server.env("anthropic"),
        model="claude-sonnet-4-6", **more,
    )


@pytest.fixture(autouse=True)
def fast_retries(aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False})


async def test_query_one_shot_is_parsed_by_the_sdk(
    git_repo: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="claude_agent_sdk")
    with FakeLLMServer([Turn(text="Hello from aistack.")]) as server:
        messages = [m async for m in query(prompt="say hello", options=options(server, git_repo))]
        sent = server.model_requests[0].body
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert "Edit" in init.data["tools"] and init.data["cwd"] == str(git_repo)
    assistant = [m for m in messages if isinstance(m, AssistantMessage)]
    assert len(assistant) == 1
    assert assistant[0].content == [TextBlock(text="Hello from aistack.")]
    assert assistant[0].model == "claude-sonnet-4-6"
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result) == (
        "success", False, "Hello from aistack.")
    assert result.session_id == init.data["session_id"] and result.num_turns == 1
    assert result.usage is not None and result.usage["output_tokens"] > 0
    assert json.dumps(sent["messages"]).count("say hello") == 1
    # The SDK found a protocol version in the init line: no "too old" warning.
    assert not [r for r in caplog.records if "too old" in r.getMessage()]


async def test_client_two_turns_with_an_interrupt(git_repo: Path) -> None:
    long_story = Turn(text="word " * 400, chunk_size=5, delay=0.05)
    first: list[Message] = []
    second: list[Message] = []
    with FakeLLMServer([long_story, Turn(text="Short answer.")]) as server:
        opts = options(server, git_repo, include_partial_messages=True)
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("tell me a long story")
            streamed = 0
            async for message in client.receive_messages():
                if isinstance(message, StreamEvent) and (
                    message.event["type"] == "content_block_delta"
                ):
                    streamed += 1
                    if streamed == 3:
                        await client.interrupt()
                        break
            first = [m async for m in client.receive_response()]
            await client.query("now a short one")
            second = [m async for m in client.receive_response()]
        requests = [r.body for r in server.model_requests]
    interrupted = first[-1]
    assert isinstance(interrupted, ResultMessage)
    assert interrupted.is_error and interrupted.subtype == "error_during_execution"
    answer = second[-1]
    assert isinstance(answer, ResultMessage) and not answer.is_error
    assert answer.result == "Short answer."
    assert answer.session_id == interrupted.session_id
    assert [m.content for m in second if isinstance(m, AssistantMessage)] == [
        [TextBlock(text="Short answer.")]]
    # One conversation: the second request carries the first prompt and the part of the
    # story streamed before the interrupt, not the whole story.
    assert len(requests) == 2
    history = json.dumps(requests[1]["messages"])
    assert "tell me a long story" in history and "now a short one" in history
    assert "word word" in history and history.count("word") < 400


async def test_can_use_tool_denies_an_edit(git_repo: Path) -> None:
    (git_repo / "calc.py").write_text(BUGGY)
    script = [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Turn(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                                           "new_string": "a + b"})]),
        Turn(text="Understood, I left calc.py alone."),
    ]
    asked: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []
    messages: list[Message] = []

    async def can_use_tool(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext,
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((name, tool_input, context))
        if name == "Edit":
            return PermissionResultDeny(message="No edits to calc.py today.")
        return PermissionResultAllow()

    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, can_use_tool=can_use_tool)
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("fix calc.py")
            messages = [m async for m in client.receive_response()]
        last_request = server.model_requests[-1].body
    # Read needs no permission in default mode; only the Edit was put to the callback.
    assert [name for name, _, _ in asked] == ["Edit"]
    _, tool_input, context = asked[0]
    assert tool_input == {"file_path": "calc.py", "old_string": "a - b",
                          "new_string": "a + b"}
    assert context.tool_use_id and context.decision_reason
    assert (git_repo / "calc.py").read_text() == BUGGY
    results = [b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
               for b in m.content if isinstance(b, ToolResultBlock)]
    assert results[-1].is_error and "No edits to calc.py today." in str(results[-1].content)
    final = messages[-1]
    assert isinstance(final, ResultMessage) and not final.is_error
    assert final.permission_denials == [{"tool_name": "Edit", "tool_use_id": context.tool_use_id,
                                         "tool_input": tool_input}]
    # The model read the denial: it is in the tool result of the last request.
    tool_results = [b for m in last_request["messages"] if m["role"] == "user"
                    and isinstance(m["content"], list)
                    for b in m["content"] if b.get("type") == "tool_result"]
    assert "No edits to calc.py today." in json.dumps(tool_results[-1])


async def test_interrupt_while_the_callback_decides_cancels_it(git_repo: Path) -> None:
    (git_repo / "calc.py").write_text(BUGGY)
    edit = ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                             "new_string": "a + b"})
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
              Turn(tool_calls=[edit]), Turn(text="Stopped as asked.")]
    asked = asyncio.Event()
    cancelled: list[str] = []
    first: list[Message] = []
    second: list[Message] = []

    async def can_use_tool(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext,
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.set()
        try:
            await asyncio.Event().wait()  # the person never answers
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return PermissionResultAllow()

    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, can_use_tool=can_use_tool)
        async with ClaudeSDKClient(options=opts) as client:
            await client.query("fix calc.py")
            await asyncio.wait_for(asked.wait(), 30)
            await client.interrupt()
            first = [m async for m in client.receive_response()]
            await client.query("never mind")
            second = [m async for m in client.receive_response()]
    assert cancelled == ["Edit"]
    assert (git_repo / "calc.py").read_text() == BUGGY
    stopped, answered = first[-1], second[-1]
    assert isinstance(stopped, ResultMessage) and stopped.is_error
    assert isinstance(answered, ResultMessage) and answered.result == "Stopped as asked."
