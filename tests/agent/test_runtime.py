"""Agent.run() in-process against the fake LLM server through the real SDKs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest, DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.session.config import make_run_config
from aistack_tui.session.live import LiveSession
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.processes import running

MODELS = {"anthropic": "anthropic/claude-sonnet-4-6", "openai": "openai/gpt-4.1",
          "google": "google/gemini-2.5-pro"}


class ScriptedApprover:
    """Stands in for the person at the confirm dialog."""

    def __init__(self, *answers: ApprovalDecision) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return self.answers.pop(0)


async def start(server: FakeLLMServer, provider: str, approver=None, **options) -> LiveSession:
    env = {**os.environ, **server.env(provider)}
    path = Path(env["AISTACK_HOME"]) / "settings.json"
    settings = json.loads(path.read_text()) if path.exists() else {}
    settings["retry"] = {"base_delay": 0.01, "max_delay": 0.05}
    path.write_text(json.dumps(settings))
    config = make_run_config(env=env, model=MODELS[provider], **options)
    return await open_session(config, approver or DenyAll())


async def collect(stream: AsyncIterator[ev.AgentEvent]) -> list[ev.AgentEvent]:
    return [e async for e in stream]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "google"])
async def test_text_turn_streams_deltas_and_records_provider(provider: str, git_repo: Path) -> None:
    with FakeLLMServer([Turn(text="Hello there, friend.", chunk_size=4)]) as server:
        session = await start(server, provider)
        events = await collect(session.agent.run("hi"))
        await session.close()
    deltas = [e.text for e in events if isinstance(e, ev.TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Hello there, friend."
    end = events[-1]
    assert isinstance(end, ev.TurnEnded) and end.reason == "completed"
    assistant = session.agent.messages[-1]
    assert assistant.role == "assistant"
    assert (assistant.provider, assistant.model) == tuple(MODELS[provider].split("/", 1))


async def test_parallel_tool_calls_answered_in_order(git_repo: Path) -> None:
    (git_repo / "a.txt").write_text("AAA\n")
    (git_repo / "b.txt").write_text("BBB\n")
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "a.txt"}),
                               ToolCall("Read", {"file_path": "b.txt"})]),
              Turn(text="both read")]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic")
        events = await collect(session.agent.run("read both"))
        await session.close()
    results = session.agent.messages[2].tool_results()
    assert ["AAA" in results[0].text(), "BBB" in results[1].text()] == [True, True]
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert {f.name for f in finished} == {"Read"} and len(finished) == 2


async def test_edit_ask_rejected_with_feedback_reaches_model(git_repo: Path) -> None:
    (git_repo / "f.py").write_text("x = 1\n")
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "f.py"})]),
              Turn(tool_calls=[ToolCall("Edit", {"file_path": "f.py", "old_string": "x = 1",
                                                 "new_string": "x = 2"})]),
              Turn(text="ok, leaving it")]
    approver = ScriptedApprover(ApprovalDecision("reject", "use y instead of x"))
    with FakeLLMServer(script) as server:
        session = await start(server, "openai", approver)
        events = await collect(session.agent.run("change x"))
        await session.close()
        last_request = json.dumps(server.model_requests[-1].body)
    assert (git_repo / "f.py").read_text() == "x = 1\n"
    assert "use y instead of x" in last_request
    assert approver.requests[0].tool_name == "Edit"
    diff = approver.requests[0].display.diff
    assert diff is not None and "+x = 2" in diff.unified()
    assert any(isinstance(e, ev.PermissionAsked) for e in events)


async def test_session_grant_stops_asking(git_repo: Path) -> None:
    # `python3 -c` offers no rule to keep (the program is the argument), `-m` does.
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": "python3 -m calendar 2024 1"})]),
              Turn(tool_calls=[ToolCall("Bash", {"command": "python3 -m calendar 2025 2"})]),
              Turn(text="done")]
    approver = ScriptedApprover(ApprovalDecision("session"))
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic", approver)
        await collect(session.agent.run("show calendars"))
        await session.close()
    assert approver.requests[0].decision.suggested_rule == "Bash(python3 -m calendar:*)"
    assert len(approver.requests) == 1  # the second call matched the granted rule
    outputs = [m.tool_results()[0].text() for m in session.agent.messages if m.tool_results()]
    assert "January 2024" in outputs[0] and "February 2025" in outputs[1]


async def test_interrupt_keeps_partial_text(git_repo: Path) -> None:
    script = [Turn(text="word " * 200, chunk_size=5, delay=0.01)]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic")
        seen: list[ev.AgentEvent] = []
        async for event in session.agent.run("talk"):
            seen.append(event)
            if sum(isinstance(e, ev.TextDelta) for e in seen) == 5:
                session.agent.interrupt()
        await session.close()
    end = seen[-1]
    assert isinstance(end, ev.TurnEnded) and end.reason == "interrupted"
    kept = session.agent.messages[-1]
    assert kept.role == "assistant" and kept.text().startswith("word word")
    assert len(kept.text()) < len("word " * 200)
    stored = await reopen_messages(session)
    assert stored[-1].text() == kept.text()


async def test_an_interrupted_answer_counts_its_tokens_and_cost(git_repo: Path) -> None:
    script = [Turn(text="word " * 200, chunk_size=5, delay=0.01)]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic")
        seen: list[ev.AgentEvent] = []
        async for event in session.agent.run("talk about words " * 20):
            seen.append(event)
            if sum(isinstance(e, ev.TextDelta) for e in seen) == 5:
                session.agent.interrupt()
        await session.close()
    updates = [e for e in seen if isinstance(e, ev.UsageUpdated)]
    assert len(updates) == 1 and updates[0].turn_usage.input_tokens > 50
    assert 0 < updates[0].turn_usage.output_tokens < 200
    totals = session.agent.totals
    assert totals.usage.input_tokens == updates[0].turn_usage.input_tokens
    assert totals.cost_usd is not None and totals.cost_usd > 0
    end = seen[-1]
    assert isinstance(end, ev.TurnEnded) and end.usage.input_tokens > 0


async def reopen_messages(session: LiveSession):
    from aistack_tui.sessions.sqlite_store import open_session_store

    store = await open_session_store(session.config.home)
    try:
        return await store.messages(session.info.id)
    finally:
        await store.close()


async def test_interrupt_cancels_running_tool(git_repo: Path) -> None:
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": "sleep 30"})]), Turn(text="never")]
    approver = ScriptedApprover(ApprovalDecision("once"))
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic", approver)
        seen: list[ev.AgentEvent] = []

        async def consume() -> None:
            async for event in session.agent.run("sleep"):
                seen.append(event)
                if isinstance(event, ev.ToolStarted):
                    await asyncio.sleep(0.3)
                    session.agent.interrupt()

        await asyncio.wait_for(consume(), timeout=20)
        await session.close()
    assert isinstance(seen[-1], ev.TurnEnded) and seen[-1].reason == "interrupted"
    results = session.agent.messages[-1].tool_results()
    assert results and results[0].is_error  # the tool_use is answered, history stays valid
    # The card says how long the command ran before the interrupt, not 0.0s.
    [finished] = [e for e in seen if isinstance(e, ev.ToolFinished)]
    assert finished.duration_s >= 0.3


async def test_steering_skips_queued_calls_and_is_delivered(git_repo: Path) -> None:
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": "sleep 0.5; echo first"}),
                               ToolCall("Bash", {"command": "echo second > second.txt"})]),
              Turn(text="switched")]
    approver = ScriptedApprover(ApprovalDecision("once"), ApprovalDecision("once"))
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic", approver)
        async for event in session.agent.run("two things"):
            if isinstance(event, ev.ToolStarted) and event.tool_use_id:
                session.agent.steer("actually, stop and say hi")
        await session.close()
        last = json.dumps(server.model_requests[-1].body)
    assert not (git_repo / "second.txt").exists()
    assert "actually, stop and say hi" in last
    assert "Skipped" in last


async def test_large_tool_result_is_paged(git_repo: Path, aistack_home: Path) -> None:
    (git_repo / "big.txt").write_text("".join(f"line {i} " + "x" * 60 + "\n" for i in range(2000)))
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "big.txt"})]), Turn(text="ok")]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic")
        await collect(session.agent.run("read it"))
        await session.close()
    result = session.agent.messages[2].tool_results()[0].text()
    assert len(result.encode()) < 31_000
    assert "Output truncated" in result and "offset=" in result
    saved = list((aistack_home / "tool-results").rglob("*.txt"))
    assert len(saved) == 1 and "line 1999" in saved[0].read_text()


async def test_resume_with_another_provider_replays_history(git_repo: Path) -> None:
    (git_repo / "notes.txt").write_text("the secret word is banana\n")
    first = [Turn(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
             Turn(text="I read the notes.")]
    with FakeLLMServer(first) as server:
        session = await start(server, "anthropic")
        await collect(session.agent.run("read notes.txt"))
        await session.close()
    session_id = session.info.id
    with FakeLLMServer([Turn(text="The word was banana.")]) as server:
        resumed = await start(server, "openai", resume=session_id)
        assert len(resumed.agent.messages) == 4
        await collect(resumed.agent.run("what was the word?"))
        await resumed.close()
        body = server.model_requests[0].body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert body["messages"][2]["tool_calls"][0]["function"]["name"] == "Read"
    assert "banana" in body["messages"][3]["content"]
    assert resumed.agent.messages[-1].provider == "openai"


async def test_an_interrupted_shell_command_stops_with_what_it_started(git_repo: Path) -> None:
    """`!command` cut short (Esc in the TUI, Ctrl+C in the line mode) ends the command and
    the process it started in a session of its own, not just the task waiting for it."""
    marker = f"sleep 41.{os.getpid()}"
    with FakeLLMServer([]) as server:
        session = await start(server, "anthropic")
        command = asyncio.create_task(
            session.run_user_command(f"setsid {marker} & sleep 40.{os.getpid()}"))
        try:
            for _ in range(300):
                if running(marker):
                    break
                await asyncio.sleep(0.01)
            assert running(marker), "the command never started"
            command.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await command
            for _ in range(100):
                if not running(marker):
                    break
                await asyncio.sleep(0.01)
            assert not running(marker), "the command's setsid child outlived the interrupt"
        finally:
            for pid in running(marker):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            await session.close()
