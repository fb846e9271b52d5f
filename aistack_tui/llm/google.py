"""Gemini adapter: the official `google-genai` SDK (`genai.Client(...).aio`), or the
lean transport (`llm.lean_http`, the default for streaming: the SDK costs ~0.6 s to
import; `google_wire` writes the same request JSON, the same translator reads the chunks).

Gemini keys function results by function name, not by call id, so a tool result's name
is looked up from the matching tool_use in the history; that is what lets a session
started with Claude or GPT continue on Gemini. Gemini's thought signatures are kept as
signed ThinkingBlocks in front of the part they belong to and sent back to Gemini only.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from aistack_tui.json_values import as_list, as_object
from aistack_tui.llm._shared import (
    DEFAULT_TIMEOUT,
    complete_via_stream,
    error_from_status,
    retry_after_from_headers,
    safe_tool_id,
    tool_names_by_id,
    transport_error,
)
from aistack_tui.llm.errors import (
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ServerError,
)
from aistack_tui.llm.google_wire import RESPONSE_STYLE, model_path, request_body
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
from aistack_tui.llm.tokens import estimate_request_tokens, estimate_tokens
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
    from google import genai
    from google.genai import errors as genai_errors
    from google.genai import types as genai_types

API_VERSION = "v1beta"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/"
SDK_VERSION = "3.6.1"
"""The google-genai release whose client headers the lean path sends (a test compares)."""
_REFUSALS = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
_RETRY_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


class _GeminiModels(Protocol):
    """The calls made on `client.aio.models`, typed with the contents we send: the
    SDK's own parameter unions name `PIL.Image`, unknown to a type checker without Pillow."""

    async def generate_content_stream(
        self,
        *,
        model: str,
        contents: list[genai_types.Content],
        config: genai_types.GenerateContentConfig,
    ) -> AsyncIterator[genai_types.GenerateContentResponse]: ...

    async def count_tokens(
        self, *, model: str, contents: list[genai_types.Content]
    ) -> genai_types.CountTokensResponse: ...

    async def generate_content(
        self,
        *,
        model: str,
        contents: list[genai_types.Content],
        config: genai_types.GenerateContentConfig,
    ) -> genai_types.GenerateContentResponse: ...


class GoogleProvider:
    """A Gemini model behind `google.genai.Client(...).aio` (Gemini Developer API)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        name: str = "google",
        timeout: float = DEFAULT_TIMEOUT,
        include_thoughts: bool | None = None,
        transport: Transport | None = None,
    ) -> None:
        self.name = name
        self.model = model
        # Thinking config is a 400 on models without thinking (gemini-2.0-*).
        self.include_thoughts = (
            include_thoughts
            if include_thoughts is not None
            else any(tag in model for tag in ("2.5", "gemini-3", "thinking"))
        )
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._sdk_client: genai.Client | None = None
        # Without a key the SDK looks for credentials of its own: that stays the SDK's.
        self.transport: Transport = chosen_transport(transport, api_key)
        lean = self.transport == "lean"
        self._lean = LeanClient(
            provider=name, headers=_lean_headers(api_key or "", timeout), timeout=timeout,
            words=FailureWords(), status_error=self._lean_status_error,
        ) if lean else None
        if not lean:
            # Built now, as before the lean path existed: the import then happens during
            # start-up (with its GC pause), not in the first request.
            self._sdk()

    def _sdk(self) -> genai.Client:
        if self._sdk_client is None:
            from google import genai
            from google.genai import types as genai_types

            options: dict[str, Any] = {
                "api_version": API_VERSION, "timeout": int(self._timeout * 1000)}
            if self._base_url:
                options["base_url"] = self._base_url
            self._sdk_client = genai.Client(
                api_key=self._api_key, vertexai=False,
                http_options=genai_types.HttpOptions(**options),
            )
        return self._sdk_client

    def _models(self) -> _GeminiModels:
        return self._sdk().aio.models

    # --- request ---------------------------------------------------------------------

    def build_config(self, request: LLMRequest) -> dict[str, Any]:
        config: dict[str, Any] = {
            "max_output_tokens": request.max_tokens,
            "automatic_function_calling": {"disable": True},
        }
        if request.system:
            config["system_instruction"] = request.system
        if request.tools:
            config["tools"] = [
                {
                    "function_declarations": [
                        {
                            "name": t.name,
                            "description": t.description,
                            "parameters_json_schema": t.input_schema,
                        }
                        for t in request.tools
                    ]
                }
            ]
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.stop_sequences:
            config["stop_sequences"] = request.stop_sequences
        if self.include_thoughts:
            config["thinking_config"] = {"include_thoughts": True}
        return config

    def convert_contents(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Our history as Gemini `contents` (roles `user` and `model`)."""
        names = tool_names_by_id(messages)
        contents: list[dict[str, Any]] = []
        for message in messages:
            parts = (
                self._model_parts(message)
                if message.role == "assistant"
                else _user_parts(message, names)
            )
            if not parts:
                continue
            role = "model" if message.role == "assistant" else "user"
            if contents and contents[-1]["role"] == role:
                contents[-1]["parts"].extend(parts)
            else:
                contents.append({"role": role, "parts": parts})
        return contents

    def _model_parts(self, message: Message) -> list[dict[str, Any]]:
        own = message.provider == self.name
        parts: list[dict[str, Any]] = []
        signature: bytes | None = None
        for block in message.content:
            if isinstance(block, ThinkingBlock):
                # Only Gemini's own signatures verify; thought text is not sent back.
                if own and block.signature:
                    signature = _b64decode(block.signature)
                continue
            part: dict[str, Any]
            if isinstance(block, TextBlock):
                if not block.text:
                    continue
                part = {"text": block.text}
            elif isinstance(block, ToolUseBlock):
                part = {
                    "function_call": {
                        "id": safe_tool_id(block.id),
                        "name": block.name,
                        "args": block.input,
                    }
                }
            elif isinstance(block, ImageBlock):
                part = _image_part(block)
            else:
                continue
            if signature:
                part["thought_signature"] = signature
                signature = None
            parts.append(part)
        return parts

    # --- streaming -------------------------------------------------------------------

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        contents = self.convert_contents(request.messages)
        config = self.build_config(request)
        state = _StreamState()
        chunks = (
            self._lean_chunks(contents, config) if self._lean is not None
            else self._sdk_chunks(contents, config)
        )
        async for chunk in chunks:
            for out in state.handle(chunk):
                yield out
        if state.finish_reason is None:
            raise ProviderConnectionError(
                "the stream ended before a finish reason", provider=self.name
            )
        if state.finish_reason == "MALFORMED_FUNCTION_CALL":
            # Gemini rejected its own call and sent neither name nor arguments we could
            # repair; the same request usually succeeds on a retry (Google's advice).
            raise ServerError(
                f"the model produced a malformed function call: {state.finish_message or ''}",
                provider=self.name,
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
        yield StreamDone(message=message, stop_reason=state.stop_reason)

    async def _sdk_chunks(
        self, contents: list[dict[str, Any]], config: dict[str, Any]
    ) -> AsyncIterator[genai_types.GenerateContentResponse]:
        from google.genai import errors as genai_errors
        from google.genai import types as genai_types

        try:
            chunks = await self._models().generate_content_stream(
                model=self.model,
                contents=[genai_types.Content.model_validate(c) for c in contents],
                config=genai_types.GenerateContentConfig.model_validate(config),
            )
            async for chunk in chunks:
                yield chunk
        except genai_errors.APIError as e:
            raise self._api_error(e) from e
        except ProviderError:
            raise
        except Exception as e:
            mapped = transport_error(e, self.name)
            if mapped is None:
                raise
            raise mapped from e

    async def _lean_chunks(
        self, contents: list[dict[str, Any]], config: dict[str, Any]
    ) -> AsyncIterator[genai_types.GenerateContentResponse]:
        """The SDK's `generate_content_stream` over the lean transport."""
        assert self._lean is not None
        base = self._base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or DEFAULT_BASE_URL
        url = join_url(base, f"{API_VERSION}/{model_path(self.model)}:streamGenerateContent")
        body = request_body(contents, config)
        async for sse in self._lean.events(url, body, params={"alt": "sse"}):
            data = as_object(parse_json_body(sse.data)) if sse.data else {}
            if data is None:
                continue
            if next(iter(data), None) == "error":  # how the SDK spots an in-stream error
                error = as_object(data["error"])
                code = error.get("code") if error is not None else None
                raise self._gemini_error(
                    _error_message(data), code, None, data
                ) from ServerAnswer(200, sse.data)
            yield cast("genai_types.GenerateContentResponse", SSEObject(data, RESPONSE_STYLE))

    def _lean_status_error(
        self, status: int, text: str, headers: httpx2.Headers, reason: str
    ) -> ProviderError:
        body: object = parse_json_body(text)
        if body is None:
            body = {"message": text, "status": reason}
        items = as_list(body)
        if items is not None and len(items) == 1:
            body = items[0]
        return self._gemini_error(_error_message(body), status, headers, body)

    def _api_error(self, e: genai_errors.APIError) -> ProviderError:
        # The SDK annotates `code` as int but falls back to the body's code, which may be
        # missing; `response` is typed with a class it never imports and `details` is the
        # raw error body, so all three are read as plain objects.
        response = cast(object, e.response)  # pyright: ignore[reportUnknownMemberType]
        details = cast(object, e.details)  # pyright: ignore[reportUnknownMemberType]
        return self._gemini_error(
            e.message or str(e), cast(object, e.code), getattr(response, "headers", None),
            details,
        )

    def _gemini_error(
        self, message: str | None, code: object, headers: Mapping[str, str] | None,
        details: object,
    ) -> ProviderError:
        """An error the SDK would raise as `APIError(code, details)`, mapped."""
        if not message:
            message = f"{code} {_error_status(details)}. {details}"
        status = code if isinstance(code, int) else 500
        retry_after = retry_after_from_headers(headers) or _retry_delay(details)
        if "overload" in message.lower():
            return OverloadedError(
                message, provider=self.name, status_code=status, retry_after=retry_after
            )
        error = error_from_status(status, message, provider=self.name)
        error.retry_after = retry_after
        return error

    async def complete(self, request: LLMRequest) -> Message:
        return await complete_via_stream(self, request)

    web_search_available = True
    """Google Search grounding (`search_google.py`): the WebSearch tool."""

    async def web_search(self, query: WebSearchQuery) -> WebSearchResult:
        from aistack_tui.llm import search_google

        return await search_google.search(self._models(), self.model, self.name, query)

    async def count_tokens(self, request: LLMRequest) -> int:
        """The API's count of the contents, plus an estimate of the system prompt and
        tools (the Developer API's countTokens accepts neither); all estimated on error."""
        try:
            from google.genai import types as genai_types

            result = await self._models().count_tokens(
                model=self.model,
                contents=[
                    genai_types.Content.model_validate(c)
                    for c in self.convert_contents(request.messages)
                ],
            )
            extra = estimate_request_tokens(LLMRequest(tools=request.tools, messages=[]))
            return int(result.total_tokens or 0) + extra + estimate_tokens(request.system)
        except Exception:
            return estimate_request_tokens(request)

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
        if self._sdk_client is not None:
            await self._sdk_client.aio.aclose()


def _lean_headers(api_key: str, timeout: float) -> dict[str, str]:
    """The headers the SDK sends, its client names included, so the server sees the same
    client on either path (a test compares them)."""
    python = ".".join(str(part) for part in sys.version_info[:3])
    client = f"google-genai-sdk/{SDK_VERSION} gl-python/{python}"
    return {
        "content-type": "application/json",
        "x-goog-api-key": api_key,
        "user-agent": client,
        "x-goog-api-client": client,
        "x-server-timeout": str(math.ceil(timeout)),
    }


def _error_message(body: object) -> str | None:
    """`message`, else `error.message`, of an error body (as the SDK reads it)."""
    fields = as_object(body)
    if fields is None:
        return None
    message = fields.get("message")
    if message is None:
        error = as_object(fields.get("error"))
        message = error.get("message") if error is not None else None
    return message if isinstance(message, str) else None


def _error_status(body: object) -> object:
    fields = as_object(body)
    if fields is None:
        return None
    error = as_object(fields.get("error"))
    return fields.get("status", error.get("status") if error is not None else None)


def _retry_delay(details: object) -> float | None:
    """Gemini's 429 carries `RetryInfo.retryDelay` ("12s") in the error details."""
    body = as_object(details)
    error = as_object(body.get("error", body)) if body is not None else None
    items = as_list(error.get("details")) if error is not None else None
    for item in items or []:
        entry = as_object(item)
        delay = entry.get("retryDelay") if entry is not None else None
        match = _RETRY_DELAY.match(delay) if isinstance(delay, str) else None
        if match:
            return float(match.group(1))
    return None


def _b64decode(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _image_part(block: ImageBlock) -> dict[str, Any]:
    return {"inline_data": {"mime_type": block.media_type, "data": _b64decode(block.data) or b""}}


def _user_parts(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    """Function responses first (Gemini pairs them with the preceding calls), then the rest."""
    responses: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            responses.append(_function_response(block, names))
            if isinstance(block.content, list):
                others.extend(_image_part(p) for p in block.content if isinstance(p, ImageBlock))
        elif isinstance(block, TextBlock) and block.text:
            others.append({"text": block.text})
        elif isinstance(block, ImageBlock):
            others.append(_image_part(block))
    return responses + others


def _function_response(block: ToolResultBlock, names: dict[str, str]) -> dict[str, Any]:
    key = "error" if block.is_error else "output"
    return {
        "function_response": {
            "id": safe_tool_id(block.tool_use_id),
            # A result whose call is missing from the history still needs a name.
            "name": names.get(block.tool_use_id, "unknown_tool"),
            "response": {key: block.text()},
        }
    }


class _StreamState:
    """Gemini streams whole parts; function calls arrive complete in one part."""

    def __init__(self) -> None:
        self.blocks: list[ContentBlock] = []
        self.text_signature: str | None = None
        self.tool_count = 0
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.usage = Usage()

    def handle(self, chunk: genai_types.GenerateContentResponse) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if chunk.usage_metadata is not None:
            self.usage = _usage(chunk.usage_metadata)
        for candidate in (chunk.candidates or [])[:1]:
            content = candidate.content
            for part in (content.parts if content is not None else None) or []:
                events.extend(self._part(part))
            if candidate.finish_reason is not None:
                self.finish_reason = str(candidate.finish_reason.value)
                self.finish_message = candidate.finish_message
        return events

    def _part(self, part: genai_types.Part) -> list[StreamEvent]:
        signature = (
            base64.b64encode(part.thought_signature).decode() if part.thought_signature else None
        )
        if part.function_call is not None:
            call = part.function_call
            call_id = call.id or "call_" + uuid.uuid4().hex[:24]
            name = call.name or ""
            args = dict(call.args or {})
            if signature:
                self.blocks.append(ThinkingBlock(thinking="", signature=signature))
            self.blocks.append(ToolUseBlock(id=call_id, name=name, input=args))
            index = self.tool_count
            self.tool_count += 1
            return [
                ToolCallStarted(index=index, id=call_id, name=name),
                ToolCallDelta(index=index, partial_json=json.dumps(args, ensure_ascii=False)),
                ToolCallEnded(index=index, id=call_id, name=name, input=args),
            ]
        if part.text is None:
            if signature:
                self.text_signature = signature
            return []
        if part.thought:
            self._append_text(part.text, thought=True)
            return [ThinkingDelta(part.text)] if part.text else []
        if signature:
            self.text_signature = signature
        self._append_text(part.text, thought=False)
        return [TextDelta(part.text)] if part.text else []

    def _append_text(self, text: str, *, thought: bool) -> None:
        last = self.blocks[-1] if self.blocks else None
        if thought:
            if isinstance(last, ThinkingBlock) and not last.signature:
                last.thinking += text
            else:
                self.blocks.append(ThinkingBlock(thinking=text))
        elif isinstance(last, TextBlock):
            last.text += text
        elif text:
            self.blocks.append(TextBlock(text=text))

    @property
    def stop_reason(self) -> str:
        if self.tool_count:
            return "tool_use"
        reason = self.finish_reason or ""
        if reason == "STOP":
            return "end_turn"
        if reason == "MAX_TOKENS":
            return "max_tokens"
        if reason in _REFUSALS:
            return "refusal"
        return "other"

    def content(self) -> list[ContentBlock]:
        blocks = list(self.blocks)
        if self.text_signature:
            # Put the signature right before the text it belongs to.
            for i, block in enumerate(blocks):
                if isinstance(block, TextBlock):
                    blocks.insert(i, ThinkingBlock(thinking="", signature=self.text_signature))
                    break
        return blocks


def _usage(meta: genai_types.GenerateContentResponseUsageMetadata) -> Usage:
    """Gemini counts cached tokens inside the prompt and thoughts outside the candidates."""
    prompt = int(meta.prompt_token_count or 0)
    cached = int(meta.cached_content_token_count or 0)
    output = int(meta.candidates_token_count or 0) + int(meta.thoughts_token_count or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=output,
        cache_read_input_tokens=cached,
    )
