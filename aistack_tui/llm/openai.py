"""OpenAI Chat Completions adapter: the official `openai` SDK, or the lean transport.

Chat Completions (not the Responses API) because every OpenAI-compatible server (ollama,
vLLM, LM Studio, DeepSeek, OpenRouter) speaks it; `openai_compat.py` reuses this class
with vendor defaults. Tool calls arrive as fragments keyed by index and are assembled
here; their argument text is repaired by `json_repair` when a model garbles it. By
default the request streams over `llm.lean_http` (the SDK costs ~0.6 s to import) with
the same body and the same chunk translator; `AISTACK_LLM_TRANSPORT=sdk` uses the SDK.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

from aistack_tui.json_values import as_object
from aistack_tui.llm._shared import (
    DEFAULT_TIMEOUT,
    complete_via_stream,
    error_from_status,
    safe_tool_id,
    transport_error,
)
from aistack_tui.llm.errors import ProviderConnectionError, ProviderError, ProviderTimeoutError
from aistack_tui.llm.json_repair import (
    INVALID_TOOL_INPUT,
    InvalidToolInput,
    parse_tool_arguments,
)
from aistack_tui.llm.lean_http import (
    FailureWords,
    LeanClient,
    ServerAnswer,
    SSEObject,
    Transport,
    chosen_transport,
    join_url,
    parse_json_body,
)
from aistack_tui.llm.tokens import estimate_request_tokens
from aistack_tui.llm.types import (
    ContentBlock,
    ImageBlock,
    LLMRequest,
    Message,
    StreamDone,
    StreamEvent,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UsageReported,
)
from aistack_tui.llm.web_search import WebSearchQuery, WebSearchResult

if TYPE_CHECKING:
    import httpx2
    import openai
    from openai.types.chat.chat_completion_chunk import (
        ChatCompletionChunk,
        ChoiceDelta,
        ChoiceDeltaToolCall,
    )
    from openai.types.completion_usage import CompletionUsage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_WORDS = FailureWords(
    send_timeout="Request timed out.", send_connect="Connection error.",
    read_timeout="Request timed out.", read_connect="Connection error.",
)
OPENAI_ID_MAX = 40
"""OpenAI rejects tool-call ids longer than this (ids minted elsewhere may be longer)."""

_FINISH_REASONS = {
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
    "stop": "end_turn",
}


class OpenAIProvider:
    """A model behind `openai.AsyncOpenAI` Chat Completions."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        name: str = "openai",
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens_field: str = "max_completion_tokens",
        transport: Transport | None = None,
    ) -> None:
        self.name = name
        self.model = model
        # OpenAI's reasoning models refuse `max_tokens`; most compatible servers only
        # know `max_tokens`. The vendor subclass picks.
        self.max_tokens_field = max_tokens_field
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._sdk_client: openai.AsyncOpenAI | None = None
        # Without a key the SDK reads OPENAI_API_KEY itself (or refuses): the SDK's.
        self.transport: Transport = chosen_transport(transport, api_key)
        lean = self.transport == "lean"
        self._lean = LeanClient(
            provider=name, headers=_lean_headers(api_key or ""), timeout=timeout,
            words=_WORDS, status_error=self._lean_status_error,
        ) if lean else None
        if not lean:
            # Built now, as before the lean path existed: the import then happens during
            # start-up (with its GC pause), not in the first request.
            self._sdk()

    def _sdk(self) -> openai.AsyncOpenAI:
        if self._sdk_client is None:
            import openai

            self._sdk_client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self._base_url, max_retries=0,
                timeout=self._timeout,
            )
        return self._sdk_client

    # --- request ---------------------------------------------------------------------

    def build_params(self, request: LLMRequest) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` (public for tests)."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": convert_messages(request),
            "stream": True,
            "stream_options": {"include_usage": True},
            self.max_tokens_field: request.max_tokens,
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in request.tools
            ]
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.stop_sequences:
            params["stop"] = request.stop_sequences
        return params

    # --- streaming -------------------------------------------------------------------

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        params = self.build_params(request)
        state = _StreamState()
        chunks = self._lean_chunks(params) if self._lean is not None else self._sdk_chunks(params)
        async for chunk in chunks:
            for out in state.handle(chunk):
                yield out
        if state.finish_reason is None:
            raise ProviderConnectionError(
                "the stream ended before a finish_reason", provider=self.name
            )
        for event in state.finish():
            yield event
        message = Message(
            role="assistant",
            content=state.content(),
            provider=self.name,
            model=self.model,
            usage=state.usage,
            stop_reason=state.stop_reason,
        )
        yield UsageReported(state.usage)
        extra = {INVALID_TOOL_INPUT: state.invalid} if state.invalid else {}
        yield StreamDone(message=message, stop_reason=state.stop_reason, extra=extra)

    async def _sdk_chunks(self, params: dict[str, Any]) -> AsyncIterator[ChatCompletionChunk]:
        import openai

        try:
            # `**params` hides `stream=True` from the overloads, so name the stream type.
            chunks = cast(
                "openai.AsyncStream[ChatCompletionChunk]",
                await self._sdk().chat.completions.create(**params),
            )
            async with chunks:
                async for chunk in chunks:
                    yield chunk
        except openai.APIStatusError as e:
            raise error_from_status(
                e.status_code, _status_message(e), provider=self.name, headers=e.response.headers
            ) from e
        except openai.APITimeoutError as e:
            raise ProviderTimeoutError(str(e), provider=self.name) from e
        except openai.APIConnectionError as e:
            raise ProviderConnectionError(str(e), provider=self.name) from e
        except openai.APIError as e:
            # An error object inside the stream (no HTTP status): the server failed.
            raise error_from_status(
                0, e.message, provider=self.name, error_type=_body_type(e.body, e.message)
            ) from e
        except ProviderError:
            raise
        except Exception as e:
            mapped = transport_error(e, self.name)
            if mapped is None:
                raise
            raise mapped from e

    async def _lean_chunks(self, params: dict[str, Any]) -> AsyncIterator[ChatCompletionChunk]:
        """The SDK's `chat.completions.create(stream=True)` over the lean transport."""
        assert self._lean is not None
        base = self._base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        async for sse in self._lean.events(join_url(base, "chat/completions"), params):
            if sse.data.startswith("[DONE]"):
                break
            data = as_object(parse_json_body(sse.data))
            if data is None:
                continue
            error = data.get("error")
            if error:
                # As the SDK: an error object inside the stream (no HTTP status).
                fields = as_object(error) or {}
                message = fields.get("message")
                if not isinstance(message, str) or not message:
                    message = "An error occurred during streaming"
                raise error_from_status(
                    0, message, provider=self.name, error_type=_body_type(error, message)
                ) from ServerAnswer(200, sse.data)
            yield cast("ChatCompletionChunk", SSEObject(data))

    def _lean_status_error(
        self, status: int, text: str, headers: httpx2.Headers, reason: str
    ) -> ProviderError:
        text = text.strip()
        body = parse_json_body(text)
        message = f"Error code: {status} - {body}" if body is not None else (
            text or f"Error code: {status}")
        whole = as_object(body)
        fields = as_object(whole.get("error", whole)) if whole is not None else None
        detail = fields.get("message") if fields is not None else None
        return error_from_status(
            status, detail if isinstance(detail, str) else message, provider=self.name,
            headers=headers,
        )

    async def complete(self, request: LLMRequest) -> Message:
        return await complete_via_stream(self, request)

    @property
    def web_search_available(self) -> bool:
        """OpenAI's own API has search (Responses API, `search_openai.py`); the
        compatible servers reusing this class (ollama, vLLM, ...) do not."""
        return self.name == "openai"

    async def web_search(self, query: WebSearchQuery) -> WebSearchResult:
        from aistack_tui.llm import search_openai

        return await search_openai.search(self._sdk(), self.model, self.name, query)

    async def count_tokens(self, request: LLMRequest) -> int:
        """An estimate: Chat Completions has no counting endpoint, and tiktoken would
        download its vocabularies at run time (which fails offline)."""
        return estimate_request_tokens(request)

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
        if self._sdk_client is not None:
            await self._sdk_client.close()


def _lean_headers(api_key: str) -> dict[str, str]:
    """The headers the SDK sends that a server acts on (it also sends telemetry)."""
    headers = {
        "accept": "application/json",
        "content-type": "application/json",
        "authorization": f"Bearer {api_key}",
    }
    # The SDK reads these variables itself.
    for variable, header in (("OPENAI_ORG_ID", "openai-organization"),
                             ("OPENAI_PROJECT_ID", "openai-project")):
        value = os.environ.get(variable)
        if value:
            headers[header] = value
    return headers


def _status_message(e: openai.APIStatusError) -> str:
    body = as_object(e.body)
    error = as_object(body.get("error", body)) if body is not None else None
    message = error.get("message") if error is not None else None
    return message if isinstance(message, str) else e.message


def _body_type(body: object, message: str) -> str | None:
    """The error type of an in-stream error, in Anthropic's vocabulary where it matters.

    OpenAI-style servers signal overload by code ("overloaded", "server_overloaded")
    or only in the message ("The server is overloaded").
    """
    kind = None
    fields = as_object(body)
    if fields is not None:
        value = fields.get("code") or fields.get("type")
        kind = value if isinstance(value, str) else None
    if "overload" in (kind or "") or "overload" in message.lower():
        return "overloaded_error"
    if kind in ("rate_limit_exceeded", "requests", "tokens"):
        return "rate_limit_error"
    return kind


# --- history conversion ------------------------------------------------------------------


def convert_messages(request: LLMRequest) -> list[dict[str, Any]]:
    """Our history as Chat Completions messages.

    Tool results become `tool` messages right after the assistant's calls; images
    inside a tool result (which `tool` messages cannot carry) follow in a user message;
    thinking from any provider is dropped, as Chat Completions accepts none.
    """
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "assistant":
            assistant = _assistant_message(message)
            if assistant:
                out.append(assistant)
        else:
            out.extend(_user_messages(message))
    return out


def _assistant_message(message: Message) -> dict[str, Any] | None:
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [
        {
            "id": safe_tool_id(b.id, OPENAI_ID_MAX),
            "type": "function",
            "function": {"name": b.name, "arguments": json.dumps(b.input, ensure_ascii=False)},
        }
        for b in message.content
        if isinstance(b, ToolUseBlock)
    ]
    if not text and not calls:
        return None
    result: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        result["tool_calls"] = calls
    return result


def _user_messages(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            text = block.text()
            if block.is_error and not text.lower().startswith("error"):
                text = f"Error: {text}"
            call_id = safe_tool_id(block.tool_use_id, OPENAI_ID_MAX)
            out.append({"role": "tool", "tool_call_id": call_id, "content": text})
            images = [p for p in block.content if isinstance(p, ImageBlock)] if isinstance(
                block.content, list
            ) else []
            if images:
                parts.append({"type": "text", "text": f"Images returned by tool call {call_id}:"})
                parts.extend(_image_part(image) for image in images)
        elif isinstance(block, TextBlock) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
    if parts:
        if all(p["type"] == "text" for p in parts):
            out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def _image_part(block: ImageBlock) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block.media_type};base64,{block.data}"},
    }


# --- stream assembly ---------------------------------------------------------------------


class _ToolCall:
    __slots__ = ("arguments", "id", "name", "ordinal")

    def __init__(self, ordinal: int, call_id: str, name: str) -> None:
        self.ordinal = ordinal
        self.id = call_id
        self.name = name
        self.arguments = ""


class _StreamState:
    def __init__(self) -> None:
        self.text = ""
        self.reasoning = ""
        self.calls: list[_ToolCall] = []
        self.by_index: dict[int, _ToolCall] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()
        self.invalid: dict[str, InvalidToolInput] = {}
        self.inputs: dict[int, dict[str, Any]] = {}

    def handle(self, chunk: ChatCompletionChunk) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices or []:
            if choice.index:
                continue  # we ask for one choice; ignore any others
            # Chunks are built without validation: a compatible server may omit `delta`.
            delta = cast("ChoiceDelta | None", choice.delta)
            if delta is not None:
                events.extend(self._delta(delta))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return events

    def _delta(self, delta: ChoiceDelta) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        # DeepSeek sends `reasoning_content`, OpenRouter and vLLM `reasoning`.
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            self.reasoning += reasoning
            events.append(ThinkingDelta(reasoning))
        if delta.content:
            self.text += delta.content
            events.append(TextDelta(delta.content))
        for fragment in delta.tool_calls or []:
            events.extend(self._tool_fragment(fragment))
        return events

    def _tool_fragment(self, fragment: ChoiceDeltaToolCall) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        function = fragment.function
        name = (function.name if function else None) or ""
        arguments = (function.arguments if function else None) or ""
        call = self.by_index.get(fragment.index)
        # Some servers reuse index 0 for every call; a new id there means a new call.
        if call is None or (fragment.id and fragment.id != call.id and call.arguments):
            call_id = fragment.id or "call_" + uuid.uuid4().hex[:24]
            call = _ToolCall(len(self.calls), call_id, name)
            self.calls.append(call)
            self.by_index[fragment.index] = call
            events.append(ToolCallStarted(index=call.ordinal, id=call.id, name=name))
        elif name and not call.name:
            call.name = name
        if arguments:
            call.arguments += arguments
            events.append(ToolCallDelta(index=call.ordinal, partial_json=arguments))
        return events

    def finish(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for call in self.calls:
            arguments, error = parse_tool_arguments(call.arguments)
            if error:
                self.invalid[call.id] = {"raw": call.arguments, "error": error}
            self.inputs[call.ordinal] = arguments
            events.append(
                ToolCallEnded(index=call.ordinal, id=call.id, name=call.name, input=arguments)
            )
        return events

    @property
    def stop_reason(self) -> str:
        if self.calls and self.finish_reason in ("stop", "tool_calls", "function_call"):
            return "tool_use"  # ollama and others say "stop" after tool calls
        return _FINISH_REASONS.get(self.finish_reason or "", "other")

    def content(self) -> list[ContentBlock]:
        out: list[ContentBlock] = []
        if self.reasoning:
            out.append(ThinkingBlock(thinking=self.reasoning))
        if self.text:
            out.append(TextBlock(text=self.text))
        out.extend(
            ToolUseBlock(id=c.id, name=c.name, input=self.inputs.get(c.ordinal, {}))
            for c in self.calls
        )
        return out


def _usage(usage: CompletionUsage) -> Usage:
    """Map OpenAI's counts onto Anthropic's: cached tokens are part of prompt_tokens."""
    prompt = int(usage.prompt_tokens or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    if not cached:
        cached = int(getattr(usage, "prompt_cache_hit_tokens", 0) or 0)  # DeepSeek
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(usage.completion_tokens or 0),
        cache_read_input_tokens=cached,
    )
