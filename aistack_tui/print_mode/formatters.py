"""Print-mode output: text, json and stream-json, one formatter per `--output-format`.

The json shapes are Claude Code's (docs/print-mode.md), so tools written for it read ours.
Each formatter consumes agent events and writes to an output stream; `finish` writes the
closing result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TextIO

from aistack_tui.agent import events as ev
from aistack_tui.llm.types import Message
from aistack_tui.permissions.types import PermissionDenial
from aistack_tui.print_mode.partial import PartialMessages, stream_event_line

OutputFormat = Literal["text", "json", "stream-json"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("text", "json", "stream-json")

SUBTYPES: dict[str, str] = {
    "completed": "success",
    "max_turns": "error_max_turns",
}


@dataclass
class RunInfo:
    session_id: str
    cwd: str
    model: str
    tools: list[str]
    permission_mode: str
    mcp_servers: list[dict[str, str]] = field(default_factory=list)


def message_envelope(message: Message, session_id: str) -> dict[str, Any]:
    """A message as Claude Code's stream-json prints it (assistant or user)."""
    blocks = [b.model_dump(exclude_none=True) for b in message.content]
    body: dict[str, Any] = {"role": message.role, "content": blocks}
    if message.role == "assistant":
        body["model"] = message.model
        body["id"] = message.id
        if message.usage is not None:
            body["usage"] = message.usage.model_dump()
    return {"type": message.role, "message": body, "session_id": session_id}


def result_object(
    end: ev.TurnEnded,
    *,
    session_id: str,
    denials: list[PermissionDenial],
    error: str | None,
) -> dict[str, Any]:
    subtype = SUBTYPES.get(end.reason, "error_during_execution")
    is_error = subtype != "success"
    result = end.final_text
    if error and end.reason == "error":
        result = error
    elif end.detail:
        result = end.detail
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "result": result,
        "session_id": session_id,
        "num_turns": end.num_turns,
        "duration_ms": end.duration_ms,
        "duration_api_ms": end.duration_api_ms,
        "usage": {
            "input_tokens": end.usage.input_tokens,
            "output_tokens": end.usage.output_tokens,
            "cache_read_input_tokens": end.usage.cache_read_input_tokens,
            "cache_creation_input_tokens": end.usage.cache_creation_input_tokens,
        },
        "total_cost_usd": end.cost_usd,
        "permission_denials": [
            {"tool_name": d.tool_name, "tool_use_id": d.tool_use_id, "tool_input": d.tool_input}
            for d in denials
        ],
    }


def init_object(info: RunInfo) -> dict[str, Any]:
    """The `system/init` line that opens a stream-json run (and each streamed turn)."""
    return {
        "type": "system",
        "subtype": "init",
        "session_id": info.session_id,
        "cwd": info.cwd,
        "model": info.model,
        "tools": info.tools,
        "mcp_servers": info.mcp_servers,
        "permission_mode": info.permission_mode,
    }


class Formatter(Protocol):
    def start(self, info: RunInfo) -> None: ...

    def event(self, event: ev.AgentEvent) -> None: ...

    def finish(self, result: dict[str, Any]) -> None: ...


class TextFormatter:
    """The final assistant text on stdout; diagnostics go to stderr elsewhere."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def start(self, info: RunInfo) -> None:
        return None

    def event(self, event: ev.AgentEvent) -> None:
        return None

    def finish(self, result: dict[str, Any]) -> None:
        if result["subtype"] == "success" or result["result"]:
            text = result["result"]
            self.out.write(text if text.endswith("\n") else text + "\n")
            self.out.flush()


class JsonFormatter(TextFormatter):
    def finish(self, result: dict[str, Any]) -> None:
        self.out.write(json.dumps(result) + "\n")
        self.out.flush()


class StreamJsonFormatter:
    """One JSON object per line, flushed as it happens; with `partial`
    (`--include-partial-messages`) also the `stream_event` lines of each answer."""

    def __init__(self, out: TextIO, partial: bool = False) -> None:
        self.out = out
        self.session_id = ""
        self.partial = PartialMessages() if partial else None

    def _emit(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj) + "\n")
        self.out.flush()

    def start(self, info: RunInfo) -> None:
        self.session_id = info.session_id
        self._emit(init_object(info))

    def event(self, event: ev.AgentEvent) -> None:
        if self.partial is not None:
            for payload in self.partial.feed(event):
                self._emit(stream_event_line(payload, self.session_id))
        if isinstance(event, ev.MessageAdded):
            message = event.message
            # The user's own prompt is not echoed: Claude Code prints assistant messages
            # and the tool results that answer them.
            if message.role == "assistant" or message.tool_results():
                self._emit(message_envelope(message, self.session_id))

    def finish(self, result: dict[str, Any]) -> None:
        self._emit(result)


def make_formatter(kind: OutputFormat, out: TextIO, *, partial: bool = False) -> Formatter:
    if kind == "json":
        return JsonFormatter(out)
    if kind == "stream-json":
        return StreamJsonFormatter(out, partial)
    return TextFormatter(out)
