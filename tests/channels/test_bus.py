"""The message bus with real sessions (the facade, the fake LLM through the SDK): keys
keep sessions apart, a stored session has one channel, a stop settles open approvals,
messages sent during a turn are not lost."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalDecision
from aistack_tui.channels.bus import ChannelLink, MessageBus, SessionBusy
from aistack_tui.channels.messages import (
    AgentOutput,
    ApprovalAnswer,
    ApprovalClosed,
    ApprovalNeeded,
    Control,
    MessageQueued,
    OpenRequest,
    Outbound,
    UserMessage,
)
from aistack_tui.channels.opener import FacadeOpener
from fakes.fake_llm import FakeLLMServer, RecordedRequest, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, write_user_settings

MODEL = "anthropic/claude-sonnet-4-6"


@pytest.fixture
async def llm(git_repo: Path, aistack_home: Path) -> AsyncIterator[FakeLLMServer]:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False,
                                       "model": MODEL})
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
async def bus(llm: FakeLLMServer) -> AsyncIterator[MessageBus]:
    bus = MessageBus(FacadeOpener({**os.environ, **llm.env("anthropic")}))
    yield bus
    await bus.close()


def _echo(request: RecordedRequest) -> Turn:
    last = request.body["messages"][-1]["content"][0]["text"]
    return Turn(text=f"echo: {last}")


async def _until_ended(link: ChannelLink, keys: set[str], timeout: float = 20
                       ) -> list[Outbound]:
    seen: list[Outbound] = []
    open_keys = set(keys)
    async with asyncio.timeout(timeout):
        while open_keys:
            message = await link.receive()
            seen.append(message)
            if isinstance(message, AgentOutput) and isinstance(message.event, ev.TurnEnded):
                open_keys.discard(message.key)
    return seen


def _text(seen: list[Outbound], key: str) -> str:
    return "".join(m.event.text for m in seen if isinstance(m, AgentOutput)
                   and m.key == key and isinstance(m.event, ev.TextDelta))


async def test_one_channel_holds_two_sessions_apart(bus: MessageBus, llm: FakeLLMServer,
                                                    git_repo: Path) -> None:
    link = bus.connect("chat")
    first = await link.open("alice", OpenRequest(cwd=git_repo))
    second = await link.open("bob", OpenRequest(cwd=git_repo))
    assert first.session_id != second.session_id
    llm.add(Turn(respond=_echo), Turn(respond=_echo))
    await link.send(UserMessage("alice", "from alice"))
    await link.send(UserMessage("bob", "from bob"))
    seen = await _until_ended(link, {"alice", "bob"})
    assert _text(seen, "alice") == "echo: from alice"
    assert _text(seen, "bob") == "echo: from bob"
    assert bus.owner(first.session_id) == bus.owner(second.session_id) == "chat"


async def test_a_stored_session_belongs_to_one_channel_at_a_time(
        bus: MessageBus, git_repo: Path) -> None:
    editor, chat = bus.connect("acp"), bus.connect("telegram")
    held = await editor.open("e1", OpenRequest(cwd=git_repo))
    with pytest.raises(SessionBusy, match="held by the acp channel"):
        await chat.open("t1", OpenRequest(cwd=git_repo, resume=held.session_id))
    assert chat.keys() == []
    await editor.release("e1")
    taken = await chat.open("t1", OpenRequest(cwd=git_repo, resume=held.session_id))
    assert taken.session_id == held.session_id
    assert bus.owner(held.session_id) == "telegram"


async def test_stop_withdraws_the_open_approval_and_the_edit_never_runs(
        bus: MessageBus, llm: FakeLLMServer, git_repo: Path) -> None:
    link = bus.connect("chat")
    await link.open("k", OpenRequest(cwd=git_repo))
    llm.add(
        Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),
        Turn(tool_calls=[ToolCall("Edit", {"file_path": "README.md", "old_string": "test",
                                           "new_string": "stopped"})]),
        Turn(text="never asked for"),
    )
    await link.send(UserMessage("k", "edit it"))
    async with asyncio.timeout(20):
        while not isinstance(message := await link.receive(), ApprovalNeeded):
            pass
    assert message.request.tool_name == "Edit"
    result = await link.control(Control("k", "stop"))
    assert result.ok and result.text == "stopped"
    seen = await _until_ended(link, {"k"})
    closed = [m for m in seen if isinstance(m, ApprovalClosed)]
    assert [(c.approved, c.withdrawn) for c in closed] == [(False, True)]
    ended = [m.event for m in seen if isinstance(m, AgentOutput)
             and isinstance(m.event, ev.TurnEnded)]
    assert ended[-1].reason == "interrupted"
    assert (git_repo / "README.md").read_text() == "# test repo\n"
    # A late answer to the withdrawn request changes nothing.
    await link.send(ApprovalAnswer("k", message.request_id, ApprovalDecision("once")))
    await asyncio.sleep(0.2)
    assert (git_repo / "README.md").read_text() == "# test repo\n"
    assert llm.remaining == 1


async def test_a_message_sent_during_a_turn_reaches_the_model_after_it(
        bus: MessageBus, llm: FakeLLMServer, git_repo: Path) -> None:
    link = bus.connect("chat")
    await link.open("k", OpenRequest(cwd=git_repo))
    llm.add(Turn(text="slow " * 60, chunk_size=5, delay=0.02), Turn(respond=_echo))
    await link.send(UserMessage("k", "first"))
    async with asyncio.timeout(20):
        while not isinstance(await link.receive(), AgentOutput):
            pass
    await link.send(UserMessage("k", "and also this"))
    queued: list[Outbound] = []
    async with asyncio.timeout(30):
        while not any(isinstance(m, AgentOutput) and isinstance(m.event, ev.TextDelta)
                      and "echo" in m.event.text for m in queued):
            queued.append(await link.receive())
    assert any(isinstance(m, MessageQueued) and m.text == "and also this" for m in queued)
    assert "and also this" in str(llm.model_requests[-1].body["messages"])


async def test_controls_switch_mode_and_refuse_what_does_not_exist(
        bus: MessageBus, git_repo: Path) -> None:
    link = bus.connect("chat")
    session = await link.open("k", OpenRequest(cwd=git_repo))
    assert (await link.control(Control("k", "mode", "plan"))).ok
    assert session.mode == "plan"
    refused = await link.control(Control("k", "mode", "yolo"))
    assert not refused.ok and "unknown permission mode" in refused.text
    assert session.mode == "plan"
    old = session.session_id
    renewed = await link.control(Control("k", "new"))
    assert renewed.ok and session.session_id != old
    assert bus.owner(session.session_id) == "chat" and bus.owner(old) is None
    missing = await link.control(Control("k", "resume", "no-such-session"))
    assert not missing.ok


async def test_a_prompt_sent_on_turn_ended_is_a_turn_of_its_own_with_its_blocks(
        bus: MessageBus, llm: FakeLLMServer, git_repo: Path) -> None:
    """An editor sends its next prompt as soon as it sees `TurnEnded`, while the bus is
    still putting the turn away: that prompt is not a follow-up flattened to text."""
    from aistack_tui.llm.types import TextBlock

    link = bus.connect("editor")
    await link.open("e", OpenRequest(cwd=git_repo))
    llm.add(Turn(text="first"), Turn(text="second"))
    await link.send(UserMessage("e", "one"))
    while True:  # the moment TurnEnded arrives, the next prompt goes out
        message = await asyncio.wait_for(link.receive(), 20)
        if isinstance(message, AgentOutput) and isinstance(message.event, ev.TurnEnded):
            break
    await link.send(UserMessage("e", [TextBlock(text="two"), TextBlock(text="attached")]))
    seen = await _until_ended(link, {"e"})
    assert not [m for m in seen if isinstance(m, MessageQueued)]
    content = llm.model_requests[1].body["messages"][-1]["content"]
    assert [b["text"] for b in content if b["type"] == "text"] == ["two", "attached"]
