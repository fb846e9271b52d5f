"""`--input-format stream-json`: what a client writes on stdin, one JSON object a line.

Claude Code's headless protocol (what the Claude Agent SDK speaks): user messages
(`{"type":"user","message":{"role":"user","content":...}}`), control requests the client
sends (`initialize`, `interrupt`, `set_permission_mode`, ...), and the client's answers
to control requests aistack sent (`control_response`, e.g. for `can_use_tool`). This
module only turns lines into typed values; `stream_session` decides what they do.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeAlias, cast

from aistack_tui.llm.types import ContentBlock, ImageBlock, TextBlock


class InputError(ValueError):
    """A stdin line that is not part of the protocol; the message says which and why."""


@dataclass(frozen=True, slots=True)
class UserTurn:
    """A user message: the prompt of one turn (text, or text and image blocks)."""

    content: str | list[ContentBlock]


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """A request from the client, answered with a `control_response` of the same id."""

    request_id: str
    subtype: str
    body: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class ControlReply:
    """The client's answer to a request aistack sent (`ok` False: `error` says why)."""

    request_id: str
    ok: bool
    body: dict[str, Any] = field(default_factory=dict[str, Any])
    error: str = ""


@dataclass(frozen=True, slots=True)
class Ignored:
    """A line the protocol allows but that asks nothing of us (`keep_alive`, ...)."""

    kind: str


Inbound: TypeAlias = UserTurn | ControlRequest | ControlReply | Ignored

READ_CHUNK = 1 << 16

# Lines a client may send that need no answer: Claude Code ignores them too.
IGNORED_TYPES = frozenset({"keep_alive", "control_cancel_request", "update_environment_variables"})


def parse_line(line: str | bytes, where: str = "stdin") -> Inbound | None:
    """One stdin line as a typed value; None for a blank line; InputError if malformed."""
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    text = text.strip()
    if not text:
        return None
    try:
        raw: Any = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not a JSON object ({e.msg} at column {e.colno})") from e
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    data = cast(dict[str, Any], raw)
    kind = data.get("type")
    if kind == "user":
        return _user_turn(data, where)
    if kind == "control_request":
        return _control_request(data, where)
    if kind == "control_response":
        return _control_reply(data, where)
    if isinstance(kind, str) and kind in IGNORED_TYPES:
        return Ignored(kind)
    raise InputError(
        f"{where}: unsupported message type {kind!r} (expected user, control_request or "
        "control_response)"
    )


def _user_turn(data: dict[str, Any], where: str) -> UserTurn:
    message = data.get("message")
    if not isinstance(message, dict):
        raise InputError(f"{where}: a user line needs a message object")
    content = cast(dict[str, Any], message).get("content")
    if isinstance(content, str):
        return UserTurn(content)
    if not isinstance(content, list) or not content:
        raise InputError(f"{where}: message.content must be a string or a list of blocks")
    blocks: list[ContentBlock] = [
        _block(b, f"{where}: content[{i}]") for i, b in enumerate(cast(list[Any], content))
    ]
    return UserTurn(blocks)


def _block(raw: Any, where: str) -> ContentBlock:
    """Text and image blocks in Anthropic's shapes; nothing else belongs in a prompt."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: a content block must be an object")
    block = cast(dict[str, Any], raw)
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return TextBlock(text=block["text"])
    if kind == "image":
        source = block.get("source")
        if isinstance(source, dict):
            src = cast(dict[str, Any], source)
            if src.get("type") == "base64" and isinstance(src.get("data"), str):
                return ImageBlock(media_type=str(src.get("media_type", "image/png")),
                                  data=src["data"])
        raise InputError(f"{where}: only base64 image sources are supported")
    raise InputError(f"{where}: unsupported content block {kind!r} (text and image only)")


def _control_request(data: dict[str, Any], where: str) -> ControlRequest:
    request_id = data.get("request_id")
    request = data.get("request")
    if not isinstance(request_id, str) or not isinstance(request, dict):
        raise InputError(f"{where}: a control_request needs request_id and request")
    body = cast(dict[str, Any], request)
    subtype = body.get("subtype")
    if not isinstance(subtype, str):
        raise InputError(f"{where}: control_request {request_id} has no subtype")
    return ControlRequest(request_id, subtype, body)


def _control_reply(data: dict[str, Any], where: str) -> ControlReply:
    response = data.get("response")
    if not isinstance(response, dict):
        raise InputError(f"{where}: a control_response needs a response object")
    body = cast(dict[str, Any], response)
    request_id = body.get("request_id")
    if not isinstance(request_id, str):
        raise InputError(f"{where}: control_response without request_id")
    if body.get("subtype") == "error":
        return ControlReply(request_id, ok=False, error=str(body.get("error") or "error"))
    inner = body.get("response")
    return ControlReply(
        request_id, ok=True, body=cast(dict[str, Any], inner) if isinstance(inner, dict) else {}
    )


class StdinLines:
    """Lines of a binary stream, read on a daemon thread and handed to the event loop.

    A thread rather than `connect_read_pipe` because stdin may be a pipe, a file or a
    terminal, and a daemon thread blocked in a read never holds up the process's exit
    when the session ends before the client closes its end. A stream with a descriptor
    is read with `os.read`, not through its buffered reader: the interpreter takes that
    reader's lock when it shuts down, and a thread blocked inside it would make that a
    fatal error ("could not acquire lock ... at interpreter shutdown").
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._pump, name="stdin-lines", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            for line in self._lines():
                self._loop.call_soon_threadsafe(self._queue.put_nowait, line)
        except (OSError, ValueError):
            pass  # stdin closed under us: the same as end of input
        finally:
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            except RuntimeError:
                pass  # the loop is gone: nobody is waiting

    def _lines(self) -> Iterator[bytes]:
        try:
            fd = self._stream.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation: an in-memory stream
            yield from iter(self._stream.readline, b"")
            return
        parts: list[bytes] = []  # of the line not yet ended (an image may span MBs)
        while chunk := os.read(fd, READ_CHUNK):
            *ended, rest = chunk.split(b"\n")
            for piece in ended:
                yield b"".join([*parts, piece, b"\n"])
                parts = []
            if rest:
                parts.append(rest)
        if parts:
            yield b"".join(parts)

    async def next(self) -> bytes | None:
        """The next line, or None at end of input."""
        return await self._queue.get()
