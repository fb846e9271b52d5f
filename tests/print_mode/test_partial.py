"""stream_event payloads rebuilt from agent events, checked with the anthropic SDK's own
event types and its stream accumulator, so a client that folds them gets the message."""

from __future__ import annotations

from typing import Any

from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

from aistack_tui.agent import events as ev
from aistack_tui.llm.types import Message, TextBlock, ThinkingBlock, ToolUseBlock, Usage
from aistack_tui.print_mode.partial import PartialMessages, stream_event_line

EVENTS: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)


def fold(payloads: list[dict[str, Any]]) -> Any:
    """What the anthropic SDK builds from these events (each validated on the way)."""
    snapshot: Any = None
    bufs: dict[int, bytes] = {}
    for payload in payloads:
        snapshot = accumulate_event(event=EVENTS.validate_python(payload),
                                    current_snapshot=snapshot, json_bufs=bufs)
    return snapshot


def answer() -> Message:
    return Message(
        role="assistant",
        content=[ThinkingBlock(thinking="look first"), TextBlock(text="Reading it."),
                 ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "a.py"})],
        model="claude-sonnet-4-6", usage=Usage(input_tokens=10, output_tokens=7),
        stop_reason="tool_use",
    )


def test_deltas_and_tool_calls_fold_into_the_same_message() -> None:
    partial = PartialMessages()
    payloads: list[dict[str, Any]] = []
    for event in [ev.TurnStarted(1, "anthropic", "claude-sonnet-4-6"),
                  ev.ThinkingDelta("look "), ev.ThinkingDelta("first"),
                  ev.TextDelta("Reading"), ev.TextDelta(" it."),
                  ev.MessageAdded(answer())]:
        payloads += partial.feed(event)
    assert [p["type"] for p in payloads][0] == "message_start"
    assert payloads[-1] == {"type": "message_stop"}
    message = fold(payloads)
    assert message.model == "claude-sonnet-4-6"
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].thinking == "look first"
    assert message.content[1].text == "Reading it."
    assert message.content[2].input == {"file_path": "a.py"}
    assert message.stop_reason == "tool_use"
    assert message.usage.output_tokens == 7


def test_tool_arguments_stream_as_input_json_deltas() -> None:
    partial = PartialMessages()
    streamed: list[dict[str, Any]] = []
    for event in [ev.TurnStarted(1, "anthropic", "claude-sonnet-4-6"),
                  ev.ThinkingDelta("look first"), ev.TextDelta("Reading it."),
                  ev.ToolInputDelta(0, "toolu_1", "Read", ""),
                  ev.ToolInputDelta(0, "toolu_1", "Read", '{"file_pa'),
                  ev.ToolInputDelta(0, "toolu_1", "Read", 'th": "a.py"}')]:
        streamed += partial.feed(event)
    finished = partial.feed(ev.MessageAdded(answer()))
    pieces = [p["delta"]["partial_json"] for p in streamed
              if p["type"] == "content_block_delta"
              and p["delta"]["type"] == "input_json_delta"]
    assert pieces == ['{"file_pa', 'th": "a.py"}']  # before the message is finished
    # The finished message does not send the streamed call a second time.
    assert not [p for p in finished if p["type"] == "content_block_start"]
    message = fold(streamed + finished)
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[2].input == {"file_path": "a.py"}


def test_each_model_response_is_its_own_message() -> None:
    partial = PartialMessages()
    first = [*partial.feed(ev.TextDelta("one")), *partial.feed(ev.MessageAdded(
        Message(role="assistant", content=[TextBlock(text="one")], stop_reason="end_turn")))]
    tool_results = partial.feed(ev.MessageAdded(Message.user("tool output")))
    second = [*partial.feed(ev.TextDelta("two")), *partial.feed(ev.MessageAdded(
        Message(role="assistant", content=[TextBlock(text="two")], stop_reason="end_turn")))]
    assert tool_results == []
    assert fold(first).content[0].text == "one"
    assert fold(second).content[0].text == "two"


def test_a_retried_stream_closes_the_partial_message_and_starts_again() -> None:
    partial = PartialMessages()
    dropped = [*partial.feed(ev.TextDelta("half an ans")),
               *partial.feed(ev.StreamReset("connection reset", 1, 0.1))]
    assert dropped[-1] == {"type": "message_stop"}
    again = [*partial.feed(ev.TextDelta("whole answer")), *partial.feed(ev.MessageAdded(
        Message(role="assistant", content=[TextBlock(text="whole answer")])))]
    assert again[0]["type"] == "message_start"
    assert fold(again).content[0].text == "whole answer"


def test_stream_event_line_is_what_the_agent_sdk_parses() -> None:
    from claude_agent_sdk import StreamEvent
    from claude_agent_sdk._internal.message_parser import parse_message

    parsed = parse_message(stream_event_line({"type": "message_stop"}, "sess-1"))
    assert isinstance(parsed, StreamEvent)
    assert parsed.session_id == "sess-1" and parsed.event == {"type": "message_stop"}
    assert parsed.parent_tool_use_id is None
