"""The control channel's request/answer pairing and the `can_use_tool` approver."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from aistack_tui.agent.ports import ApprovalRequest
from aistack_tui.permissions.types import Decision
from aistack_tui.print_mode.control import ControlChannel, ControlError
from aistack_tui.print_mode.permission_prompt import (
    ControlApprover,
    keep_kind,
    rule_value,
    suggestions,
)
from aistack_tui.print_mode.stream_input import ControlReply, parse_line
from aistack_tui.tools.base import ToolCallDisplay

EDIT_INPUT = {"file_path": "/repo/a.py", "old_string": "a - b", "new_string": "a + b"}


class Client:
    """The other end of the channel: sees what aistack wrote, answers by request id."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.channel = ControlChannel(self.sent.append)

    async def next_request(self) -> dict[str, Any]:
        for _ in range(200):
            requests = [m for m in self.sent if m["type"] == "control_request"]
            if requests:
                return requests[-1]
            await asyncio.sleep(0.01)
        raise AssertionError("no control_request was sent")

    async def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        request = await self.next_request()
        reply = parse_line(
            json.dumps({"type": "control_response", "response": {
                "subtype": "success", "request_id": request["request_id"], "response": body}})
        )
        assert isinstance(reply, ControlReply)
        assert self.channel.resolve(reply)
        return request


def edit_request(suggested: str | None = "Edit(/repo/a.py)") -> ApprovalRequest:
    return ApprovalRequest(
        tool_use_id="toolu_1",
        tool_name="Edit",
        tool_input=EDIT_INPUT,
        decision=Decision("ask", "edits ask in default mode", suggested_rule=suggested),
        display=ToolCallDisplay(summary="Edit /repo/a.py"),
    )


async def test_request_gets_the_answer_with_its_own_id() -> None:
    client = Client()
    pending = asyncio.create_task(client.channel.request("can_use_tool", {"tool_name": "Bash"}))
    request = await client.answer({"behavior": "allow"})
    assert request["request"] == {"subtype": "can_use_tool", "tool_name": "Bash"}
    assert await pending == {"behavior": "allow"}
    assert client.channel.waiting == 0


async def test_error_answer_raises_control_error() -> None:
    client = Client()
    pending = asyncio.create_task(client.channel.request("can_use_tool", {}))
    request = await client.next_request()
    client.channel.resolve(ControlReply(request["request_id"], ok=False, error="boom"))
    with pytest.raises(ControlError, match="boom"):
        await pending


async def test_an_answer_for_no_request_is_not_taken() -> None:
    client = Client()
    assert not client.channel.resolve(ControlReply("aistack_99", ok=True))


async def test_cancelled_request_tells_the_client() -> None:
    client = Client()
    pending = asyncio.create_task(client.channel.request("can_use_tool", {}))
    request = await client.next_request()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert client.sent[-1] == {"type": "control_cancel_request",
                               "request_id": request["request_id"]}


async def test_closing_fails_waiting_and_later_requests() -> None:
    client = Client()
    pending = asyncio.create_task(client.channel.request("can_use_tool", {}))
    await client.next_request()
    client.channel.close("stdin closed")
    with pytest.raises(ControlError, match="stdin closed"):
        await pending
    with pytest.raises(ControlError):
        await client.channel.request("can_use_tool", {})


def test_rule_values_in_claude_codes_shape() -> None:
    assert rule_value("Bash(npm run test:*)") == {"toolName": "Bash",
                                                  "ruleContent": "npm run test:*"}
    assert rule_value("mcp__docs") == {"toolName": "mcp__docs"}
    assert suggestions(None) == []
    assert [s["destination"] for s in suggestions("Read(/x)")] == ["session", "localSettings"]


def test_keeping_the_suggested_rule_maps_to_session_or_save() -> None:
    rule = {"toolName": "Edit", "ruleContent": "/repo/a.py"}
    add = {"type": "addRules", "rules": [rule], "behavior": "allow"}
    assert keep_kind([{**add, "destination": "session"}], "Edit(/repo/a.py)") == "session"
    assert keep_kind([{**add, "destination": "localSettings"}], "Edit(/repo/a.py)") == "save"
    assert keep_kind([add], "Edit(/repo/a.py)") == "session"  # no destination: session
    # A rule other than the one suggested is not granted behind the engine's back.
    other = {**add, "rules": [{"toolName": "Edit"}], "destination": "session"}
    assert keep_kind([other], "Edit(/repo/a.py)") == "once"
    assert keep_kind(None, "Edit(/repo/a.py)") == "once"


async def test_approver_sends_can_use_tool_and_denies_with_the_clients_message() -> None:
    client = Client()
    interrupted: list[bool] = []
    approver = ControlApprover(client.channel, on_interrupt=lambda: interrupted.append(True),
                               on_mode=lambda m: None)
    pending = asyncio.create_task(approver.decide(edit_request()))
    request = await client.answer({"behavior": "deny", "message": "not that file"})
    body = request["request"]
    assert body["subtype"] == "can_use_tool"
    assert body["tool_name"] == "Edit" and body["input"] == EDIT_INPUT
    assert body["tool_use_id"] == "toolu_1"
    assert body["decision_reason"] == "edits ask in default mode"
    assert body["permission_suggestions"][0]["rules"] == [
        {"toolName": "Edit", "ruleContent": "/repo/a.py"}]
    decision = await pending
    assert decision.kind == "reject" and decision.feedback == "not that file"
    assert interrupted == []


async def test_deny_with_interrupt_stops_the_turn() -> None:
    client = Client()
    interrupted: list[bool] = []
    approver = ControlApprover(client.channel, on_interrupt=lambda: interrupted.append(True),
                               on_mode=lambda m: None)
    pending = asyncio.create_task(approver.decide(edit_request()))
    await client.answer({"behavior": "deny", "message": "stop", "interrupt": True})
    assert (await pending).kind == "reject"
    assert interrupted == [True]


async def test_allow_with_the_same_input_runs_once_and_set_mode_is_applied() -> None:
    client = Client()
    modes: list[str] = []
    approver = ControlApprover(client.channel, on_interrupt=lambda: None, on_mode=modes.append)
    pending = asyncio.create_task(approver.decide(edit_request()))
    await client.answer({"behavior": "allow", "updatedInput": dict(EDIT_INPUT),
                         "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits",
                                                 "destination": "session"}]})
    assert (await pending).kind == "once"
    assert modes == ["acceptEdits"]


async def test_allow_with_changed_input_carries_the_input() -> None:
    client = Client()
    approver = ControlApprover(client.channel, on_interrupt=lambda: None, on_mode=lambda m: None)
    pending = asyncio.create_task(approver.decide(edit_request()))
    await client.answer({"behavior": "allow",
                         "updatedInput": {**EDIT_INPUT, "new_string": "0"}})
    decision = await pending
    assert decision.kind == "once"
    assert decision.updated_input == {**EDIT_INPUT, "new_string": "0"}


async def test_a_client_that_goes_away_denies() -> None:
    client = Client()
    approver = ControlApprover(client.channel, on_interrupt=lambda: None, on_mode=lambda m: None)
    pending = asyncio.create_task(approver.decide(edit_request()))
    await client.next_request()
    client.channel.close("stdin closed")
    decision = await pending
    assert decision.kind == "reject" and "stdin closed" in decision.feedback
