"""Task subagents in parallel, and compaction of a long session, through the fake server."""

from __future__ import annotations

import json
import time
from pathlib import Path

from aistack_tui.agent import events as ev
from aistack_tui.agent.compaction import SUMMARY_KIND, safe_split_index
from aistack_tui.llm.types import Message, ToolResultBlock, ToolUseBlock
from fakes.fake_llm import FakeLLMServer, RecordedRequest, ToolCall, Turn
from tests.agent.test_runtime import collect, start


def is_summary_request(request: RecordedRequest) -> bool:
    return not request.body.get("tools")


async def test_two_tasks_run_in_parallel_and_report_back(git_repo: Path) -> None:
    (git_repo / "a.txt").write_text("alpha\n")
    starts: dict[str, float] = {}

    def child(name: str, answer: str):
        def respond(request: RecordedRequest) -> Turn:
            starts.setdefault(name, time.monotonic())
            sent = json.dumps(request.body)
            if "tool_result" in sent:
                return Turn(text=answer)
            return Turn(tool_calls=[ToolCall("Bash", {"command": "sleep 0.6; echo slept"})])
        return respond

    def route(request: RecordedRequest) -> Turn:
        sent = json.dumps(request.body["messages"][0])
        if "find alpha" in sent:
            return child("one", "alpha is in a.txt")(request)
        if "count files" in sent:
            return child("two", "there are 2 files")(request)
        if "alpha is in a.txt" in json.dumps(request.body):
            return Turn(text="Both subagents reported.")
        return Turn(tool_calls=[
            ToolCall("Task", {"description": "find alpha", "prompt": "find alpha"}),
            ToolCall("Task", {"description": "count files", "prompt": "count files"}),
        ])

    script = [Turn(respond=route) for _ in range(7)]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic", None,
                              allowed_tools=["Bash(sleep 0.6; echo slept)"])
        began = time.monotonic()
        events = await collect(session.agent.run("use two subagents"))
        elapsed = time.monotonic() - began
        await session.close()
        parent_requests = [r for r in server.model_requests
                           if "use two subagents" in json.dumps(r.body["messages"][0])]
    assert events[-1].reason == "completed" and events[-1].final_text == "Both subagents reported."
    results = session.agent.messages[2].tool_results()
    assert [r.text() for r in results] == ["alpha is in a.txt", "there are 2 files"]
    assert abs(starts["one"] - starts["two"]) < 0.5 and elapsed < 2.4  # concurrent, not serial
    child_tools = [t["name"] for t in server.model_requests[1].body["tools"]]
    assert "Task" not in child_tools and "Bash" in child_tools
    assert len(parent_requests) == 2
    nested = [e for e in events if isinstance(e, ev.SubagentEvent)]
    assert {e.description for e in nested} == {"find alpha", "count files"}
    # Tokens of both children are in the parent's totals.
    assert session.agent.totals.usage.output_tokens > events[-1].usage.output_tokens // 2


async def test_long_session_compacts_and_completes(git_repo: Path, aistack_home: Path) -> None:
    (git_repo / "data.txt").write_text("value=42\n")
    (aistack_home / "settings.json").write_text(json.dumps({
        "retry": {"base_delay": 0.01},
        "models": {"anthropic/claude-sonnet-4-6": {"context_window": 14000,
                                                   "max_output_tokens": 1000}}}))
    summaries: list[RecordedRequest] = []
    steps = iter(range(100))

    def respond(request: RecordedRequest) -> Turn:
        if is_summary_request(request):
            summaries.append(request)
            return Turn(text="SUMMARY: read data.txt repeatedly, value=42.")
        step = next(steps)
        if step < 6:
            return Turn(text=f"Step {step}: " + "analysis " * 900,
                        tool_calls=[ToolCall("Read", {"file_path": "data.txt"})])
        return Turn(text="The value is 42.")

    with FakeLLMServer([Turn(respond=respond) for _ in range(12)]) as server:
        session = await start(server, "anthropic")
        events = await collect(session.agent.run("read data.txt six times"))
        await session.close()
        last = server.model_requests[-1].body
    assert events[-1].reason == "completed" and events[-1].final_text == "The value is 42."
    assert summaries, "the session never compacted"
    assert "tools" not in summaries[0].body or not summaries[0].body["tools"]
    notices = [e.text for e in events if isinstance(e, ev.Notice)]
    assert any("compacted" in n for n in notices)
    assert "SUMMARY: read data.txt" in json.dumps(last["messages"][0])
    # Every tool_use sent after compaction still has its tool_result right after it.
    messages = last["messages"]
    for i, message in enumerate(messages):
        uses = [b["id"] for b in message["content"] if isinstance(b, dict)
                and b.get("type") == "tool_use"]
        if uses:
            answered = {b["tool_use_id"] for b in messages[i + 1]["content"]
                        if b.get("type") == "tool_result"}
            assert set(uses) <= answered
    from aistack_tui.sessions.sqlite_store import open_session_store

    store = await open_session_store(aistack_home)
    stored = await store.messages(session.info.id)
    await store.close()
    assert any(m.kind == SUMMARY_KIND for m in stored)


def test_safe_split_never_separates_tool_use_from_result() -> None:
    use = Message(role="assistant", content=[ToolUseBlock(id="t1", name="Read", input={})])
    result = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="x")])
    history = [Message.user("a"), use, result, use, result, Message.user("b"), use, result]
    split = safe_split_index(history, keep_recent=3)
    assert split == 5 and history[split].text() == "b"
    assert safe_split_index(history, keep_recent=2) == 6  # before the call, with its result
    for keep in range(1, len(history)):
        split = safe_split_index(history, keep)
        older = history[:split]
        uses = {b.id for m in older for b in m.tool_uses()}
        answered = {b.tool_use_id for m in older for b in m.tool_results()}
        assert uses == answered
    assert safe_split_index([Message.user("only")], keep_recent=1) == 0


async def test_routed_subagent_is_priced_at_its_own_model(git_repo: Path,
                                                           aistack_home: Path) -> None:
    """`router.subagent` sends Task work to a cheaper model, and /cost prices it as such."""
    (aistack_home / "settings.json").write_text(json.dumps(
        {"router": {"subagent": "anthropic/claude-haiku-4-5"}}))
    script = [
        Turn(tool_calls=[ToolCall("Task", {"description": "look", "prompt": "look around"})],
             usage=(1000, 0)),
        Turn(text="nothing there", usage=(1_000_000, 0)),  # the subagent
        Turn(text="The subagent found nothing.", usage=(1000, 0)),
    ]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic")
        events = await collect(session.agent.run("send a subagent"))
        await session.close()
        models = [r.body["model"] for r in server.model_requests]
    assert events[-1].reason == "completed"
    assert models == ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-sonnet-4-6"]
    # 2k tokens at Sonnet's $3/M plus 1M at Haiku's $1/M (not Sonnet's $3/M).
    assert session.agent.totals.cost_usd is not None
    assert abs(session.agent.totals.cost_usd - (0.006 + 1.0)) < 1e-9
    assert any("haiku" in model for model in session.agent.totals.by_model)
