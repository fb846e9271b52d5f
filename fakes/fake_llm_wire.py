"""Byte-exact renderings of one scripted answer in the three providers' wire formats.

Each renderer turns a ``Reply`` (a turn with ids and token counts resolved) into either a
JSON body or a list of SSE ``Frame``s, shaped the way the real API sends them, so the
official SDKs' own parsers and stream accumulators run unmodified against the fake."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

MALFORMED_ARGS = '{"path": "notes.txt",, "content": }'


@dataclass
class Call:
    """A tool call with its id fixed and its arguments already serialised."""

    id: str
    name: str
    args: dict[str, Any]
    args_json: str


@dataclass
class Reply:
    """Everything a renderer needs: the content plus resolved ids and token counts."""

    model: str
    message_id: str
    text: str = ""
    thinking: str = ""
    calls: list[Call] = field(default_factory=list)
    input_tokens: int = 1
    output_tokens: int = 1
    cache_read: int = 0
    chunk_size: int = 8
    malformed: bool = False  # Gemini's MALFORMED_FUNCTION_CALL finish instead of calls
    search: Any = None  # a fake_llm_search.Search: the provider's server-side search answer


@dataclass
class Frame:
    """One write on the wire; ``text_chars`` counts visible text so a cut can be placed."""

    data: bytes
    text_chars: int = 0


def chunks(text: str, size: int) -> list[str]:
    """Split text into pieces of ``size`` characters (at least one piece per non-empty text)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def arg_fragments(args_json: str, size: int) -> list[str]:
    """Argument JSON split so that it always arrives in several fragments, as real APIs do."""
    return chunks(args_json, max(1, min(size, len(args_json) // 3)))


def _signature(seed: str) -> str:
    return base64.b64encode(("fake-signature:" + seed[:32]).encode()).decode()


def _j(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- Anthropic Messages

ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def anthropic_error(status: int, message: str | None = None) -> dict[str, Any]:
    fallback = "api_error" if status >= 500 else "invalid_request_error"
    etype = ANTHROPIC_ERROR_TYPES.get(status, fallback)
    return {"type": "error",
            "error": {"type": etype, "message": message or etype.replace("_", " ")}}


def _anthropic_event(name: str, payload: dict[str, Any], text_chars: int = 0) -> Frame:
    return Frame(f"event: {name}\ndata: {_j(payload)}\n\n".encode(), text_chars)


def _anthropic_usage(r: Reply, output: int) -> dict[str, Any]:
    return {
        "input_tokens": r.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": r.cache_read,
        "output_tokens": output,
    }


def _anthropic_message(r: Reply, content: list[dict[str, Any]], stop: str | None, out: int) -> dict:
    return {
        "id": r.message_id,
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _anthropic_usage(r, out),
    }


def anthropic_stream_head(r: Reply) -> list[Frame]:
    start = _anthropic_message(r, [], None, 1)
    return [
        _anthropic_event("message_start", {"type": "message_start", "message": start}),
        _anthropic_event("ping", {"type": "ping"}),
    ]


def anthropic_stream(r: Reply) -> list[Frame]:
    frames = anthropic_stream_head(r)
    index = 0

    def block(kind: dict[str, Any], deltas: list[tuple[dict[str, Any], int]]) -> None:
        nonlocal index
        frames.append(_anthropic_event("content_block_start", {
            "type": "content_block_start", "index": index, "content_block": kind}))
        for delta, n in deltas:
            frames.append(_anthropic_event("content_block_delta", {
                "type": "content_block_delta", "index": index, "delta": delta}, n))
        frames.append(_anthropic_event("content_block_stop", {
            "type": "content_block_stop", "index": index}))
        index += 1

    if r.thinking:
        deltas = [({"type": "thinking_delta", "thinking": p}, 0)
                  for p in chunks(r.thinking, r.chunk_size)]
        deltas.append(({"type": "signature_delta", "signature": _signature(r.thinking)}, 0))
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if r.text:
        block({"type": "text", "text": ""},
              [({"type": "text_delta", "text": p}, len(p)) for p in chunks(r.text, r.chunk_size)])
    for call in r.calls:
        # The real API opens every tool_use block with an empty partial_json.
        pieces = ["", *arg_fragments(call.args_json, r.chunk_size)]
        block({"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
              [({"type": "input_json_delta", "partial_json": p}, 0) for p in pieces])
    stop = "tool_use" if r.calls else "end_turn"
    frames.append(_anthropic_event("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": _anthropic_usage(r, r.output_tokens)}))
    frames.append(_anthropic_event("message_stop", {"type": "message_stop"}))
    return frames


def anthropic_body(r: Reply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if r.thinking:
        content.append({"type": "thinking", "thinking": r.thinking,
                        "signature": _signature(r.thinking)})
    if r.text:
        content.append({"type": "text", "text": r.text})
    for call in r.calls:
        # The real API parses tool input server-side; a malformed one arrives as {}.
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.args})
    return _anthropic_message(r, content, "tool_use" if r.calls else "end_turn", r.output_tokens)


def anthropic_in_stream_overloaded(r: Reply) -> list[Frame]:
    err = anthropic_error(529, "Overloaded")
    return [*anthropic_stream_head(r), _anthropic_event("error", err)]


# ---------------------------------------------------------------- OpenAI Chat Completions

OPENAI_ERRORS = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def openai_error(status: int, message: str | None = None) -> dict[str, Any]:
    etype, code = OPENAI_ERRORS.get(status, ("server_error", "server_error"))
    if status == 529:
        code = "overloaded"
    return {"error": {"message": message or f"{etype} ({code})", "type": etype,
                      "param": None, "code": code}}


def _openai_usage(r: Reply) -> dict[str, Any]:
    prompt = r.input_tokens + r.cache_read
    return {
        "prompt_tokens": prompt,
        "completion_tokens": r.output_tokens,
        "total_tokens": prompt + r.output_tokens,
        "prompt_tokens_details": {"cached_tokens": r.cache_read, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": len(r.thinking) // 4, "audio_tokens": 0},
    }


class _OpenAIChunks:
    def __init__(self, r: Reply, include_usage: bool) -> None:
        self.r = r
        self.include_usage = include_usage
        self.created = int(time.time())
        self.frames: list[Frame] = []

    def add(self, delta: dict[str, Any], finish: str | None = None, chars: int = 0) -> None:
        chunk: dict[str, Any] = {
            "id": self.r.message_id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.r.model, "system_fingerprint": "fp_fake", "service_tier": "default",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self.include_usage:
            chunk["usage"] = None
        self.frames.append(Frame(f"data: {_j(chunk)}\n\n".encode(), chars))


def openai_stream_head(r: Reply, include_usage: bool) -> _OpenAIChunks:
    out = _OpenAIChunks(r, include_usage)
    out.add({"role": "assistant", "content": "", "refusal": None})
    return out


def openai_stream(r: Reply, include_usage: bool) -> list[Frame]:
    out = openai_stream_head(r, include_usage)
    # Reasoning is not part of OpenAI's Chat Completions; compatible vendors (DeepSeek,
    # vLLM, OpenRouter) send it as delta.reasoning_content, which the SDK keeps as an extra.
    for p in chunks(r.thinking, r.chunk_size):
        out.add({"reasoning_content": p})
    for p in chunks(r.text, r.chunk_size):
        out.add({"content": p}, chars=len(p))
    for i, call in enumerate(r.calls):
        out.add({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                 "function": {"name": call.name, "arguments": ""}}]})
        for frag in arg_fragments(call.args_json, r.chunk_size):
            out.add({"tool_calls": [{"index": i, "function": {"arguments": frag}}]})
    out.add({}, finish="tool_calls" if r.calls else "stop")
    if include_usage:
        final = {"id": r.message_id, "object": "chat.completion.chunk", "created": out.created,
                 "model": r.model, "system_fingerprint": "fp_fake", "choices": [],
                 "usage": _openai_usage(r)}
        out.frames.append(Frame(f"data: {_j(final)}\n\n".encode()))
    out.frames.append(Frame(b"data: [DONE]\n\n"))
    return out.frames


def openai_body(r: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text or None, "refusal": None}
    if r.thinking:
        message["reasoning_content"] = r.thinking
    if r.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args_json}}
            for c in r.calls
        ]
    return {
        "id": r.message_id, "object": "chat.completion", "created": int(time.time()),
        "model": r.model, "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if r.calls else "stop"}],
        "usage": _openai_usage(r),
    }


def openai_in_stream_overloaded(r: Reply) -> list[Frame]:
    out = openai_stream_head(r, include_usage=False)
    err = openai_error(503, "The server is overloaded. Please retry your request.")
    out.frames.append(Frame(f"data: {_j(err)}\n\n".encode()))
    return out.frames


# ---------------------------------------------------------------- Gemini generateContent

GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
    529: "UNAVAILABLE",
}


def google_error(status: int, message: str | None = None) -> dict[str, Any]:
    gstatus = GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    return {"error": {"code": status, "message": message or gstatus.replace("_", " ").lower(),
                      "status": gstatus}}


def _google_usage(r: Reply, final: bool) -> dict[str, Any]:
    prompt = r.input_tokens + r.cache_read
    usage: dict[str, Any] = {"promptTokenCount": prompt, "totalTokenCount": prompt}
    if r.cache_read:
        usage["cachedContentTokenCount"] = r.cache_read
    if final:
        thoughts = len(r.thinking) // 4
        usage["candidatesTokenCount"] = r.output_tokens
        usage["totalTokenCount"] = prompt + r.output_tokens + thoughts
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
    return usage


def _google_parts(r: Reply) -> list[tuple[dict[str, Any], int]]:
    """Every part the answer streams, with its count of visible text characters."""
    parts: list[tuple[dict[str, Any], int]] = [
        ({"text": p, "thought": True}, 0) for p in chunks(r.thinking, r.chunk_size)]
    parts += [({"text": p}, len(p)) for p in chunks(r.text, r.chunk_size)]
    if not r.malformed:
        parts += [({"functionCall": {"id": c.id, "name": c.name, "args": c.args}}, 0)
                  for c in r.calls]
    if r.thinking:
        # Gemini returns the thought signature on the first part after the thoughts.
        first = next((p for p, _ in parts if not p.get("thought")), None)
        if first is not None:
            first["thoughtSignature"] = _signature(r.thinking)
    return parts


def _google_response(r: Reply, parts: list[dict[str, Any]], final: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if final and r.malformed:
        candidate = {"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0,
                     "finishMessage": f"Malformed function call: {MALFORMED_ARGS}"}
    elif final:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "usageMetadata": _google_usage(r, final),
            "modelVersion": r.model, "responseId": r.message_id}


def google_stream(r: Reply) -> list[Frame]:
    parts = _google_parts(r)
    frames: list[Frame] = []
    if r.malformed or not parts:
        body = [_google_response(r, [p for p, _ in parts], final=False)] if parts else []
        body.append(_google_response(r, [{"text": ""}] if not r.malformed else [], final=True))
        return [Frame(f"data: {_j(b)}\r\n\r\n".encode()) for b in body]
    for i, (part, n) in enumerate(parts):
        chunk = _google_response(r, [part], final=i == len(parts) - 1)
        frames.append(Frame(f"data: {_j(chunk)}\r\n\r\n".encode(), n))
    return frames


def google_body(r: Reply) -> dict[str, Any]:
    merged: list[dict[str, Any]] = []
    for part, _ in _google_parts(r):
        prev = merged[-1] if merged else None
        same_kind = prev is not None and "text" in prev and "text" in part and (
            prev.get("thought") == part.get("thought")) and "thoughtSignature" not in part
        if same_kind and prev is not None:
            prev["text"] += part["text"]
        else:
            merged.append(dict(part))
    return _google_response(r, merged or [{"text": ""}], final=True)


def google_in_stream_overloaded(r: Reply) -> list[Frame]:
    err = google_error(503, "The model is overloaded. Please try again later.")
    return [Frame(f"data: {_j(err)}\r\n\r\n".encode())]
