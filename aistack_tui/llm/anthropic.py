"""Anthropic Messages API adapter: the official `anthropic` SDK, or the lean transport.

Imported only through `llm.registry`. The SDK costs ~1.3 s to import, so it is imported
only when used: by default a message streams over `llm.lean_http` (the same body, the
same headers that matter, the same event translator below), and the SDK serves
count-tokens and the `AISTACK_LLM_TRANSPORT=sdk` fallback. Adds prompt-cache
breakpoints on the system prompt, the last tool and the last message block, because an
agent resends the same long prefix every turn and cached input costs a tenth.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from aistack_tui.json_values import as_object
from aistack_tui.llm._shared import (
    DEFAULT_TIMEOUT,
    complete_via_stream,
    error_from_status,
    safe_tool_id,
    transport_error,
)
from aistack_tui.llm.errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)
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
    ToolUseBlock,
    Usage,
    UsageReported,
)
from aistack_tui.llm.web_search import WebSearchQuery, WebSearchResult

if TYPE_CHECKING:
    import anthropic
    import httpx2

API_VERSION = "2026-10-21"
"""The `anthropic-version` the lean path sends: the installed SDK's (a test compares)."""
DEFAULT_BASE_URL = "https://api.anthropic.com"
_WORDS = FailureWords(
    send_timeout=(
        "Request timed out or interrupted. This could be due to a network timeout, "
        "dropped connection, or request cancellation. See "
        "https://docs.anthropic.com/en/api/errors#long-requests for more details."
    ),
    send_connect="Connection error.",
)
CACHE = {"type": "ephemeral"}
REDACTED_PREFIX = "redacted:"
"""A `redacted_thinking` block is kept as a ThinkingBlock whose signature carries its
encrypted `data` behind this prefix, so it can be sent back verbatim."""

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


class AnthropicProvider:
    """A Claude model behind `anthropic.AsyncAnthropic` (or any server speaking its API)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        name: str = "anthropic",
        timeout: float = DEFAULT_TIMEOUT,
        thinking_budget: int | None = None,
        transport: Transport | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.thinking_budget = thinking_budget
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._sdk_client: anthropic.AsyncAnthropic | None = None
        # Without a key the SDK finds credentials of its own (auth token, profiles):
        # that stays the SDK's.
        self.transport: Transport = chosen_transport(transport, api_key)
        lean = self.transport == "lean"
        self._lean = LeanClient(
            provider=name, headers=self._lean_headers(api_key or ""), timeout=timeout,
            words=_WORDS, status_error=self._lean_status_error,
        ) if lean else None
        if not lean:
            # Built now, as before the lean path existed: the import then happens during
            # start-up (with its GC pause), not in the first request.
            self._sdk()

    def _sdk(self) -> anthropic.AsyncAnthropic:
        if self._sdk_client is None:
            import anthropic

            self._sdk_client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self._base_url, max_retries=0,
                timeout=self._timeout,
            )
        return self._sdk_client

    @staticmethod
    def _lean_headers(api_key: str) -> dict[str, str]:
        """The headers the SDK sends that a server acts on (it also sends telemetry)."""
        headers = {
            "accept": "application/json",
            "content-type": "application/json",
            "anthropic-version": API_VERSION,
            "authorization": f"Bearer {api_key}",
        }
        # The SDK reads this variable itself: extra headers for gateways and proxies.
        for line in os.environ.get("ANTHROPIC_CUSTOM_HEADERS", "").split("\n"):
            key, colon, value = line.partition(":")
            if colon:
                headers[key.strip()] = value.strip()
        return headers

    # --- request ---------------------------------------------------------------------

    def build_params(self, request: LLMRequest, *, for_count: bool = False) -> dict[str, Any]:
        """The keyword arguments of `messages.create` (public so tests can inspect them)."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": self._convert_messages(request.messages),
        }
        if request.system:
            params["system"] = [{"type": "text", "text": request.system, "cache_control": CACHE}]
        if request.tools:
            tools: list[dict[str, Any]] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in request.tools
            ]
            tools[-1]["cache_control"] = CACHE
            params["tools"] = tools
        if for_count:
            return params
        params["max_tokens"] = request.max_tokens
        budget = self.thinking_budget
        if budget and request.max_tokens > 1024:
            # The API requires 1024 <= budget < max_tokens.
            budget = max(1024, min(budget, request.max_tokens - 1))
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif request.temperature is not None:
            # anthropic 2.x dropped `temperature` from `create`'s signature; the API
            # still takes it for the models that support it.
            params["extra_body"] = {"temperature": request.temperature}
        if request.stop_sequences:
            params["stop_sequences"] = request.stop_sequences
        return params

    def _convert_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for message in messages:
            converted = (self._convert_block(message, block) for block in message.content)
            blocks = [b for b in converted if b]
            # The API wants tool results first in a user message.
            blocks.sort(key=lambda b: 0 if b["type"] == "tool_result" else 1)
            if not blocks:
                continue  # an empty message is rejected; skipping it loses nothing
            if out and out[-1]["role"] == message.role:
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": message.role, "content": blocks})
        if out:
            last = out[-1]["content"][-1]
            if last["type"] not in ("thinking", "redacted_thinking"):
                last["cache_control"] = CACHE
        return out

    def _convert_block(self, message: Message, block: ContentBlock) -> dict[str, Any] | None:
        if isinstance(block, TextBlock):
            # Empty or whitespace-only text blocks are a 400 at Anthropic.
            return {"type": "text", "text": block.text} if block.text.strip() else None
        if isinstance(block, ThinkingBlock):
            return self._convert_thinking(message, block)
        if isinstance(block, ImageBlock):
            return _image(block)
        if isinstance(block, ToolUseBlock):
            return {
                "type": "tool_use",
                "id": safe_tool_id(block.id),
                "name": block.name,
                "input": block.input,
            }
        content: str | list[dict[str, Any]]
        if isinstance(block.content, str):
            content = block.content
        else:
            content = [
                _tool_result_part(part)
                for part in block.content
                if isinstance(part, ImageBlock) or part.text.strip()
            ]
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": safe_tool_id(block.tool_use_id),
            "content": content,
        }
        if block.is_error:
            result["is_error"] = True
        return result

    def _convert_thinking(self, message: Message, block: ThinkingBlock) -> dict[str, Any] | None:
        """Replay only thinking that Anthropic signed for this provider.

        An unsigned block (or one signed by another provider, such as Gemini's thought
        signatures) fails the API's verification, and reasoning shown as plain text
        would read as something the model said; so it is dropped.
        """
        if message.role != "assistant" or not block.signature:
            return None
        if message.provider not in (None, self.name):
            return None
        if block.signature.startswith(REDACTED_PREFIX):
            return {"type": "redacted_thinking", "data": block.signature[len(REDACTED_PREFIX) :]}
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}

    # --- streaming -------------------------------------------------------------------

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        params = self.build_params(request)
        state = _StreamState()
        events = self._lean_events(params) if self._lean is not None else self._sdk_events(params)
        async for event in events:
            for out in state.handle(event):
                yield out
        if not state.stopped:
            raise ProviderConnectionError(
                "the stream ended before message_stop", provider=self.name
            )
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

    async def _sdk_events(self, params: dict[str, Any]) -> AsyncIterator[Any]:
        import anthropic

        try:
            events = await self._sdk().messages.create(**params, stream=True)
            async with events:
                async for event in events:
                    yield event
        except anthropic.APIStatusError as e:
            raise self._status_error(e) from e
        except anthropic.APITimeoutError as e:
            raise ProviderTimeoutError(str(e), provider=self.name) from e
        except anthropic.APIConnectionError as e:
            raise ProviderConnectionError(str(e), provider=self.name) from e
        except anthropic.APIError as e:
            raise ProviderError(str(e), provider=self.name) from e
        except ProviderError:
            raise
        except Exception as e:
            mapped = transport_error(e, self.name)
            if mapped is None:
                raise
            raise mapped from e

    async def _lean_events(self, params: dict[str, Any]) -> AsyncIterator[Any]:
        """The SDK's `messages.create(stream=True)` over the lean transport."""
        assert self._lean is not None
        body = {key: value for key, value in params.items() if key != "extra_body"}
        body.update(params.get("extra_body", {}))
        body["stream"] = True
        url = join_url(
            self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
            "v1/messages",
        )
        async for sse in self._lean.events(url, body):
            # As the SDK: pings and unnamed events are skipped, `error` raises.
            if sse.event in (None, "ping"):
                continue
            if sse.event == "error":
                raise self._in_stream_error(sse.data) from ServerAnswer(200, sse.data)
            if sse.data:
                yield SSEObject(json.loads(sse.data))

    def _in_stream_error(self, data: str) -> ProviderError:
        body = parse_json_body(data)
        message = f"{body}" if body is not None else data or "Error code: 200"
        api_message, kind = _error_fields(body)
        return error_from_status(
            200, api_message or message, provider=self.name, error_type=kind
        )

    def _lean_status_error(
        self, status: int, text: str, headers: httpx2.Headers, reason: str
    ) -> ProviderError:
        text = text.strip()
        body = parse_json_body(text)
        if body is not None:
            message = f"Error code: {status} - {body}"
        else:
            message = text or f"Error code: {status}"
        api_message, kind = _error_fields(body)
        return error_from_status(
            status, api_message or message, provider=self.name, headers=headers,
            error_type=kind,
        )

    def _status_error(self, e: anthropic.APIStatusError) -> ProviderError:
        message = e.api_message or e.message
        return error_from_status(
            e.status_code,
            message,
            provider=self.name,
            headers=e.response.headers,
            error_type=e.type,
        )

    async def complete(self, request: LLMRequest) -> Message:
        return await complete_via_stream(self, request)

    web_search_available = True
    """Anthropic's server-side search (`search_anthropic.py`): the WebSearch tool."""

    async def web_search(self, query: WebSearchQuery) -> WebSearchResult:
        from aistack_tui.llm import search_anthropic

        return await search_anthropic.search(self._sdk(), self.model, self.name, query)

    async def count_tokens(self, request: LLMRequest) -> int:
        """The API's exact count; the local estimate when the endpoint is unavailable."""
        try:
            result = await self._sdk().messages.count_tokens(
                **self.build_params(request, for_count=True)
            )
            return int(result.input_tokens)
        except Exception:
            return estimate_request_tokens(request)

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
        if self._sdk_client is not None:
            await self._sdk_client.close()


def _error_fields(body: object) -> tuple[str | None, str | None]:
    """`error.message` and `error.type` of an error body, as the SDK reads them."""
    fields = as_object(body)
    error = as_object(fields.get("error")) if fields is not None else None
    if error is None:
        return None, None
    message, kind = error.get("message"), error.get("type")
    return (
        message if isinstance(message, str) else None,
        kind if isinstance(kind, str) else None,
    )


def _tool_result_part(part: TextBlock | ImageBlock) -> dict[str, Any]:
    return _image(part) if isinstance(part, ImageBlock) else {"type": "text", "text": part.text}


def _image(block: ImageBlock) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.media_type, "data": block.data},
    }


class _StreamState:
    """Accumulates raw stream events into our events and the final content blocks."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.tool_count = 0
        self.usage = Usage()
        self.stop_reason = "other"
        self.stopped = False
        self.invalid: dict[str, InvalidToolInput] = {}

    def handle(self, event: Any) -> list[StreamEvent]:
        kind = event.type
        if kind == "message_start":
            self._merge_usage(event.message.usage)
        elif kind == "content_block_start":
            return self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "content_block_stop":
            return self._stop(event.index)
        elif kind == "message_delta":
            reason = event.delta.stop_reason
            if reason:
                self.stop_reason = _STOP_REASONS.get(reason, "other")
            if event.usage is not None:
                self._merge_usage(event.usage)
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _start(self, index: int, block: Any) -> list[StreamEvent]:
        kind = block.type
        if kind == "text":
            self.blocks[index] = {"type": "text", "text": block.text or ""}
            return [TextDelta(block.text)] if block.text else []
        if kind == "thinking":
            self.blocks[index] = {
                "type": "thinking",
                "thinking": block.thinking or "",
                "signature": block.signature or None,
            }
            return [ThinkingDelta(block.thinking)] if block.thinking else []
        if kind == "redacted_thinking":
            self.blocks[index] = {
                "type": "thinking",
                "thinking": "",
                "signature": REDACTED_PREFIX + block.data,
            }
            return []
        if kind == "tool_use":
            tool_index = self.tool_count
            self.tool_count += 1
            self.blocks[index] = {
                "type": "tool_use",
                "id": block.id,
                "name": block.name,
                "json": "",
                "tool_index": tool_index,
            }
            return [ToolCallStarted(index=tool_index, id=block.id, name=block.name)]
        return []  # server tools, citations, future block types: not ours to replay

    def _delta(self, index: int, delta: Any) -> list[StreamEvent]:
        block = self.blocks.get(index)
        if block is None:
            return []
        kind = delta.type
        if kind == "text_delta" and block["type"] == "text":
            block["text"] += delta.text
            return [TextDelta(delta.text)]
        if kind == "thinking_delta" and block["type"] == "thinking":
            block["thinking"] += delta.thinking
            return [ThinkingDelta(delta.thinking)]
        if kind == "signature_delta" and block["type"] == "thinking":
            block["signature"] = (block["signature"] or "") + delta.signature
        elif kind == "input_json_delta" and block["type"] == "tool_use":
            block["json"] += delta.partial_json
            return [ToolCallDelta(index=block["tool_index"], partial_json=delta.partial_json)]
        return []

    def _stop(self, index: int) -> list[StreamEvent]:
        block = self.blocks.get(index)
        if block is None or block["type"] != "tool_use":
            return []
        arguments, error = parse_tool_arguments(block["json"])
        block["input"] = arguments
        if error:
            self.invalid[block["id"]] = {"raw": block["json"], "error": error}
        return [
            ToolCallEnded(
                index=block["tool_index"], id=block["id"], name=block["name"], input=arguments
            )
        ]

    def _merge_usage(self, usage: Any) -> None:
        current = self.usage
        self.usage = Usage(
            input_tokens=_pick(usage, "input_tokens", current.input_tokens),
            output_tokens=_pick(usage, "output_tokens", current.output_tokens),
            cache_read_input_tokens=_pick(
                usage, "cache_read_input_tokens", current.cache_read_input_tokens
            ),
            cache_creation_input_tokens=_pick(
                usage, "cache_creation_input_tokens", current.cache_creation_input_tokens
            ),
        )

    def content(self) -> list[ContentBlock]:
        out: list[ContentBlock] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block["type"] == "text":
                if block["text"]:
                    out.append(TextBlock(text=block["text"]))
            elif block["type"] == "thinking":
                out.append(ThinkingBlock(thinking=block["thinking"], signature=block["signature"]))
            elif block["type"] == "tool_use":
                out.append(
                    ToolUseBlock(id=block["id"], name=block["name"], input=block.get("input", {}))
                )
        return out


def _pick(usage: Any, field: str, default: int) -> int:
    """Anthropic sends cumulative counts, and `message_delta` may omit the input ones."""
    value = getattr(usage, field, None)
    return default if value is None else int(value)
