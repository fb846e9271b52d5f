"""Helpers the adapters share: SDK-neutral error mapping and history conversion.

Nothing here imports an SDK. The three adapters differ in wire format but agree on what
an HTTP status, a cut connection or a foreign thinking block means, so those rules live
in one place instead of drifting apart in three copies.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from aistack_tui.llm.errors import (
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    error_for_status,
    parse_retry_after,
)
from aistack_tui.llm.types import LLMRequest, Message, StreamDone, StreamEvent, ToolUseBlock

DEFAULT_TIMEOUT = 600.0
"""Seconds the SDKs wait for a connection or for the next chunk of a stream."""


class _Streams(Protocol):
    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]: ...


async def complete_via_stream(provider: _Streams, request: LLMRequest) -> Message:
    """`complete` for every adapter: streaming keeps one code path for both calls."""
    final: Message | None = None
    async for event in provider.stream(request):
        if isinstance(event, StreamDone):
            final = event.message
    if final is None:  # adapters always end with StreamDone or raise; defend anyway
        raise ProviderConnectionError("the stream ended without a final message")
    return final


def retry_after_from_headers(headers: Mapping[str, str] | None) -> float | None:
    """`retry-after-ms` (Anthropic, OpenAI) is more precise than `retry-after`."""
    if not headers:
        return None
    ms = parse_retry_after(headers.get("retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    return parse_retry_after(headers.get("retry-after"))


# The in-stream error types Anthropic (and proxies imitating it) send inside a 200 response.
_IN_STREAM_ERRORS: dict[str, type[ProviderError]] = {
    "overloaded_error": OverloadedError,
    "rate_limit_error": RateLimitError,
    "api_error": ServerError,
    "timeout_error": ProviderTimeoutError,
}


def error_from_status(
    status: int,
    message: str,
    *,
    provider: str,
    headers: Mapping[str, str] | None = None,
    error_type: str | None = None,
) -> ProviderError:
    """Map a status (and, for in-stream errors, the body's error type) onto our hierarchy."""
    retry_after = retry_after_from_headers(headers)
    if error_type in _IN_STREAM_ERRORS and not 400 <= status < 600:
        cls = _IN_STREAM_ERRORS[error_type]
        return cls(message, provider=provider, retry_after=retry_after)
    if error_type == "overloaded_error":
        return OverloadedError(
            message, provider=provider, status_code=status, retry_after=retry_after
        )
    if not 400 <= status < 600:
        # An error event inside a 200 stream with an unknown type: the server failed.
        return ServerError(message, provider=provider, retry_after=retry_after)
    return error_for_status(status, message, provider=provider, retry_after=retry_after)


def transport_error(exc: BaseException, provider: str) -> ProviderError | None:
    """Map an httpx/httpx2/aiohttp transport failure that escaped an SDK, else None.

    The SDKs wrap errors raised while sending a request, but an error while reading a
    streamed body (a cut connection, a read timeout) surfaces as the HTTP library's own
    exception. Matching on class names covers httpx and its fork httpx2 (the SDKs here
    use either) without importing them.
    """
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"TimeoutException", "TimeoutError", "ServerTimeoutError"}:
        return ProviderTimeoutError(f"timed out: {exc}", provider=provider)
    if names & {"TransportError", "HTTPError", "StreamError", "ClientError", "ConnectionError"}:
        return ProviderConnectionError(f"connection failed: {exc}", provider=provider)
    return None


def tool_names_by_id(messages: list[Message]) -> dict[str, str]:
    """Tool name per tool_use id, for formats that key results by name (Gemini)."""
    names: dict[str, str] = {}
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                names[block.id] = block.name
    return names


_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def safe_tool_id(tool_id: str, max_len: int = 64) -> str:
    """A tool-call id every provider accepts, applied alike to calls and their results.

    Anthropic wants `^[a-zA-Z0-9_-]+$`, OpenAI at most 40 characters; ids minted by
    another provider may break either rule, and a call and its result must still match.
    """
    cleaned = _ID_UNSAFE.sub("_", tool_id) or "call"
    if len(cleaned) > max_len:
        cleaned = cleaned[: max_len - 9] + "_" + format(_stable_hash(tool_id), "08x")
    return cleaned


def _stable_hash(text: str) -> int:
    """FNV-1a: `hash()` is salted per process, and ids must match across replays."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def dump_json_compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
