"""`--include-partial-messages`: the model's answer as it streams, in `stream_event` lines.

Claude Code forwards the Anthropic streaming events (`message_start`,
`content_block_start`, `content_block_delta`, `content_block_stop`, `message_delta`,
`message_stop`) wrapped as `{"type":"stream_event","event":{...}}`. The agent's events are
provider-neutral, so the same shapes are rebuilt from them here, for every provider: text,
thinking and a tool call's arguments (`input_json_delta` pieces) as they arrive. A
provider that hands a call over whole (Gemini) gives one piece; a call no piece was
streamed for is sent whole when the message is complete, before the `assistant` line.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal, assert_never

from aistack_tui.agent import events as ev
from aistack_tui.llm.types import Message, ToolUseBlock

BlockKind = Literal["text", "thinking", "tool_use"]


class PartialMessages:
    """Turns agent events into stream_event payloads (the `event` objects), in order."""

    def __init__(self) -> None:
        self._model = ""
        self._open = False  # a message_start was sent and no message_stop yet
        self._index = -1
        self._block: BlockKind | None = None
        self._tool: str | None = None
        """The id of the tool call whose block is open."""
        self._streamed: set[str] = set()
        """Tool calls whose block was streamed in this message."""

    def feed(self, event: ev.AgentEvent) -> list[dict[str, Any]]:
        match event:
            case ev.TurnStarted(model=model):
                self._model = model
                return []
            case ev.TextDelta(text=text):
                return self._grow("text", text)
            case ev.ThinkingDelta(text=text):
                return self._grow("thinking", text)
            case ev.ToolInputDelta(tool_use_id=call_id, name=name, partial_json=piece):
                return self._tool_piece(call_id, name, piece)
            case ev.StreamReset():
                # The partial answer is dropped and the request sent again: end what was
                # streamed so a client starts the retried message afresh.
                return self._stop()
            case ev.MessageAdded(message=message):
                return self._finish(message) if message.role == "assistant" else []
            case (
                ev.ToolCallRequested() | ev.PermissionAsked() | ev.PermissionDecided()
                | ev.ToolStarted() | ev.ToolFinished() | ev.UsageUpdated() | ev.Notice()
                | ev.ErrorOccurred() | ev.SubagentEvent() | ev.TurnEnded()
            ):
                return []  # a subagent's answer is its own; it reaches the parent whole
            case _:
                assert_never(event)

    def _grow(self, kind: BlockKind, text: str) -> list[dict[str, Any]]:
        if not text:
            return []
        delta = "text_delta" if kind == "text" else "thinking_delta"
        return [*self._start_block(kind), _delta(self._index, delta, text)]

    def _tool_piece(self, call_id: str, name: str, piece: str) -> list[dict[str, Any]]:
        out = self._begin()
        if self._tool != call_id:
            out += self._close_block()
            self._index += 1
            self._block, self._tool = "tool_use", call_id
            self._streamed.add(call_id)
            out.append({"type": "content_block_start", "index": self._index,
                        "content_block": {"type": "tool_use", "id": call_id, "name": name,
                                          "input": {}}})
        if piece:
            out.append(_delta(self._index, "input_json_delta", piece))
        return out

    def _begin(self) -> list[dict[str, Any]]:
        if self._open:
            return []
        self._open, self._index, self._block, self._tool = True, -1, None, None
        self._streamed = set()
        return [
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{uuid.uuid4().hex[:24]}",
                    "type": "message",
                    "role": "assistant",
                    "model": self._model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            }
        ]

    def _close_block(self) -> list[dict[str, Any]]:
        if self._block is None:
            return []
        self._block, self._tool = None, None
        return [{"type": "content_block_stop", "index": self._index}]

    def _start_block(self, kind: BlockKind) -> list[dict[str, Any]]:
        out = self._begin()
        if self._block == kind:
            return out
        out += self._close_block()
        self._index += 1
        self._block = kind
        empty: dict[str, Any] = (
            {"type": "text", "text": ""} if kind == "text"
            else {"type": "thinking", "thinking": "", "signature": ""}
        )
        return [*out, {"type": "content_block_start", "index": self._index,
                       "content_block": empty}]

    def _stop(self) -> list[dict[str, Any]]:
        if not self._open:
            return []
        out = [*self._close_block(), {"type": "message_stop"}]
        self._open = False
        return out

    def _finish(self, message: Message) -> list[dict[str, Any]]:
        out = [*self._begin(), *self._close_block()]
        for block in message.tool_uses():
            if block.id not in self._streamed:
                out += self._tool_use(block)
        usage = message.usage
        out.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": message.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage.output_tokens if usage else 0},
            }
        )
        out.append({"type": "message_stop"})
        self._open = False
        return out

    def _tool_use(self, block: ToolUseBlock) -> list[dict[str, Any]]:
        self._index += 1
        return [
            {"type": "content_block_start", "index": self._index,
             "content_block": {"type": "tool_use", "id": block.id, "name": block.name,
                               "input": {}}},
            _delta(self._index, "input_json_delta", json.dumps(block.input)),
            {"type": "content_block_stop", "index": self._index},
        ]


def _delta(index: int, kind: str, value: str) -> dict[str, Any]:
    key = {"text_delta": "text", "thinking_delta": "thinking"}.get(kind, "partial_json")
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, key: value}}


def stream_event_line(event: dict[str, Any], session_id: str) -> dict[str, Any]:
    """One `stream_event` line as Claude Code prints it."""
    return {
        "type": "stream_event",
        "uuid": str(uuid.uuid4()),
        "session_id": session_id,
        "event": event,
        "parent_tool_use_id": None,
    }
