"""The rest of the SDK's control protocol, through the real `claude-agent-sdk` (see
test_agent_sdk.py): `hooks=` callbacks, in-process SDK MCP servers, `can_use_tool` with
`updated_input`, and the client's other control requests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    HookContext,
    HookMatcher,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    ToolPermissionContext,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.test_agent_sdk import BUGGY, fast_retries, options

pytestmark = pytest.mark.slow
__all__ = ["fast_retries"]  # the autouse fixture, shared

EDIT = ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a * b"})


def tool_results(body: dict[str, Any]) -> str:
    """Every tool_result the model was sent in one request, as text."""
    return json.dumps([b for m in body["messages"] if m["role"] == "user"
                       and isinstance(m["content"], list)
                       for b in m["content"] if b.get("type") == "tool_result"])


async def converse(client: ClaudeSDKClient, prompt: str) -> list[Message]:
    await client.query(prompt)
    return [m async for m in client.receive_response()]


async def test_hook_callback_denies_an_edit(git_repo: Path) -> None:
    (git_repo / "calc.py").write_text(BUGGY)
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def guard(hook_input: Any, tool_use_id: str | None, context: HookContext) -> Any:
        seen.append((dict(hook_input), tool_use_id))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": "No edits to calc.py."}}

    stops: list[bool] = []
    messages: list[Message] = []

    async def one_more_word(hook_input: Any, tool_use_id: str | None, ctx: HookContext) -> Any:
        stops.append(hook_input["stop_hook_active"])
        return {} if stops[1:] else {"decision": "block", "reason": "Say why."}

    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
              Turn(tool_calls=[EDIT]), Turn(text="Left it alone."),
              Turn(text="A hook said no.")]
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, permission_mode="acceptEdits", hooks={
            "PreToolUse": [HookMatcher(matcher="Edit|Write", hooks=[guard])],
            "Stop": [HookMatcher(hooks=[one_more_word])],
        })
        async with ClaudeSDKClient(options=opts) as client:
            messages = await converse(client, "fix calc.py")
        last = server.model_requests[-1].body
    # The matcher chose: the Read ran without the callback, the Edit was put to it.
    assert [i["tool_name"] for i, _ in seen] == ["Edit"]
    hook_input, tool_use_id = seen[0]
    assert hook_input["hook_event_name"] == "PreToolUse"
    assert hook_input["tool_input"] == EDIT.input and tool_use_id
    assert (git_repo / "calc.py").read_text() == BUGGY
    assert "No edits to calc.py." in tool_results(last)
    # The Stop callback sent the model back once, with its reason.
    assert stops == [False, True] and "Say why." in json.dumps(last["messages"])
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "A hook said no."


async def test_hook_callbacks_change_input_add_context_and_stop(git_repo: Path) -> None:
    events: list[str] = []

    async def on_prompt(hook_input: Any, tool_use_id: str | None, ctx: HookContext) -> Any:
        events.append(hook_input["hook_event_name"])
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                       "additionalContext": "The user's name is Ada."}}

    async def rewrite(hook_input: Any, tool_use_id: str | None, ctx: HookContext) -> Any:
        events.append("PreToolUse")
        return {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "updatedInput": {**hook_input["tool_input"], "content": "written by the hook\n"}}}

    async def after(hook_input: Any, tool_use_id: str | None, ctx: HookContext) -> Any:
        events.append("PostToolUse")
        return {"continue_": False, "stopReason": "One file is enough.",
                "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                       "additionalContext": "checked by the hook"}}

    write = ToolCall("Write", {"file_path": "notes.txt", "content": "the model's text\n"})
    script = [Turn(tool_calls=[write]), Turn(text="never requested")]
    messages: list[Message] = []
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, hooks={
            "UserPromptSubmit": [HookMatcher(hooks=[on_prompt])],
            "PreToolUse": [HookMatcher(matcher="Write", hooks=[rewrite])],
            "PostToolUse": [HookMatcher(matcher="Write", hooks=[after])],
        })
        async with ClaudeSDKClient(options=opts) as client:
            messages = await converse(client, "take notes")
        requests = [r.body for r in server.model_requests]
    assert events == ["UserPromptSubmit", "PreToolUse", "PostToolUse"]
    assert "The user's name is Ada." in json.dumps(requests[0]["messages"])
    # The hook's allow skipped the prompt and its input is what ran.
    assert (git_repo / "notes.txt").read_text() == "written by the hook\n"
    # continue: false ended the turn after the tool: the model was not asked again.
    assert len(requests) == 1
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "One file is enough."
    tool_result = [b for m in messages if isinstance(m, UserMessage)
                   and isinstance(m.content, list) for b in m.content]
    assert "checked by the hook" in str(tool_result)


@tool("add", "Add two integers", {"a": int, "b": int})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Sum: {args['a'] + args['b']}"}]}


async def test_sdk_mcp_server_tool_result_reaches_the_model(git_repo: Path) -> None:
    calc = create_sdk_mcp_server("calc", tools=[add])
    script = [Turn(tool_calls=[ToolCall("mcp__calc__add", {"a": 2, "b": 3})]),
              Turn(text="It is 5."), Turn(text="No calculator now."), Turn(text="Back.")]
    first: list[Message] = []
    status: Any = {}
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, mcp_servers={"calc": calc},
                       allowed_tools=["mcp__calc__add"])
        async with ClaudeSDKClient(options=opts) as client:
            first = await converse(client, "add 2 and 3")
            status = await client.get_mcp_status()
            await client.toggle_mcp_server("calc", enabled=False)
            await converse(client, "again")
            await client.toggle_mcp_server("calc", enabled=True)
            await client.reconnect_mcp_server("calc")
            await converse(client, "and again")
        requests = [r.body for r in server.model_requests]
    init = first[0]
    assert isinstance(init, SystemMessage)
    assert {"name": "calc", "status": "connected"} in init.data["mcp_servers"]
    assert "mcp__calc__add" in init.data["tools"]
    assert "mcp__calc__add" in [t["name"] for t in requests[0]["tools"]]
    assert "Sum: 5" in tool_results(requests[1])
    result = first[-1]
    assert isinstance(result, ResultMessage) and result.result == "It is 5."
    assert status["mcpServers"][0]["name"] == "calc"
    assert status["mcpServers"][0]["status"] == "connected"
    # Toggled off, the tool is not offered; on again (and reconnected), it is.
    assert "mcp__calc__add" not in [t["name"] for t in requests[2]["tools"]]
    assert "mcp__calc__add" in [t["name"] for t in requests[3]["tools"]]


async def test_updated_input_runs_after_the_rules_check_it(git_repo: Path) -> None:
    (git_repo / "calc.py").write_text(BUGGY)

    async def can_use_tool(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext,
    ) -> PermissionResultAllow | PermissionResultDeny:
        if name == "Edit":
            return PermissionResultAllow(updated_input={**tool_input, "new_string": "a + b"})
        # Redirect the notes into a file a deny rule protects: the rules still decide.
        return PermissionResultAllow(updated_input={**tool_input, "file_path": "secret.txt"})

    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
              Turn(tool_calls=[EDIT]),
              Turn(tool_calls=[ToolCall("Write", {"file_path": "notes.txt", "content": "x"})]),
              Turn(text="Done.")]
    messages: list[Message] = []
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, can_use_tool=can_use_tool,
                       disallowed_tools=["Write(secret.txt)"])
        async with ClaudeSDKClient(options=opts) as client:
            messages = await converse(client, "fix calc.py and take notes")
        last = server.model_requests[-1].body
    assert (git_repo / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")
    assert not (git_repo / "secret.txt").exists() and not (git_repo / "notes.txt").exists()
    assert "denied" in tool_results(last)
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert [d["tool_name"] for d in result.permission_denials or []] == ["Write"]


async def test_context_usage_and_rewind_files_are_answered(git_repo: Path) -> None:
    (git_repo / "calc.py").write_text(BUGGY)
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
              Turn(tool_calls=[EDIT]), Turn(text="Changed.")]
    usage: Any = {}
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, permission_mode="acceptEdits",
                       enable_file_checkpointing=True,
                       extra_args={"replay-user-messages": None})
        async with ClaudeSDKClient(options=opts) as client:
            messages = await converse(client, "make it multiply")
            usage = await client.get_context_usage()
            assert "a * b" in (git_repo / "calc.py").read_text()
            # The echoed prompt is the user line with a uuid (tool results have none).
            prompt = next(m for m in messages if isinstance(m, UserMessage) and m.uuid)
            assert "make it multiply" in str(prompt.content) and prompt.uuid
            await client.rewind_files(prompt.uuid)
            with pytest.raises(Exception, match="no background task 'task-1'"):
                await client.stop_task("task-1")
    assert (git_repo / "calc.py").read_text() == BUGGY
    assert usage["model"] == "anthropic/claude-sonnet-4-6"
    assert usage["totalTokens"] > 0 and usage["maxTokens"] >= usage["totalTokens"]
    assert {c["name"] for c in usage["categories"]} >= {"System prompt", "Messages"}


async def test_tool_arguments_stream_before_the_assistant_message(git_repo: Path) -> None:
    write = ToolCall("Write", {"file_path": "notes.txt", "content": "a fairly long note " * 5})
    script = [Turn(tool_calls=[write], chunk_size=8), Turn(text="Noted.")]
    messages: list[Message] = []
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, permission_mode="acceptEdits",
                       include_partial_messages=True)
        async with ClaudeSDKClient(options=opts) as client:
            messages = await converse(client, "take notes")
    first_answer = next(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage))
    pieces = [m.event["delta"]["partial_json"] for m in messages[:first_answer]
              if isinstance(m, StreamEvent) and m.event["type"] == "content_block_delta"
              and m.event["delta"]["type"] == "input_json_delta"]
    assert len(pieces) > 3  # several deltas, each a piece of the arguments
    assert json.loads("".join(pieces)) == write.input


async def test_stop_task_stops_a_background_shell(git_repo: Path) -> None:
    start = ToolCall("Bash", {"command": "sleep 60", "run_in_background": True})
    check = ToolCall("TaskOutput", {"task_id": "bash_1"})
    script = [Turn(tool_calls=[start]), Turn(text="Started."),
              Turn(tool_calls=[check]), Turn(text="It was stopped.")]
    started: list[Message] = []
    with FakeLLMServer(script) as server:
        opts = options(server, git_repo, permission_mode="bypassPermissions")
        async with ClaudeSDKClient(options=opts) as client:
            started = await converse(client, "start a long job")
            await client.stop_task("bash_1")
            await converse(client, "how is it doing?")
        last = server.model_requests[-1].body
    assert "bash_1" in str(started)  # the tool result names the shell the client stops
    assert "<status>killed" in tool_results(last)
