"""Gemini adapter over the official `google-genai` SDK (`genai.Client(...).aio`).

Gemini keys function results by function name, not by call id, so a tool result's name
is looked up from the matching tool_use in the history; that is what lets a session
started with Claude or GPT continue on Gemini. Gemini's thought signatures are kept as
signed ThinkingBlocks in front of the part they belong to and sent back to Gemini only.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any, Protocol, cast

from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

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

API_VERSION = "v1beta"
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
    ) -> None:
        self.name = name
        self.model = model
        # Thinking config is a 400 on models without thinking (gemini-2.0-*).
        self.include_thoughts = (
            include_thoughts
            if include_thoughts is not None
            else any(tag in model for tag in ("2.5", "gemini-3", "thinking"))
        )
        options: dict[str, Any] = {"api_version": API_VERSION, "timeout": int(timeout * 1000)}
        if base_url:
            options["base_url"] = base_url
        self._client = genai.Client(
            api_key=api_key, vertexai=False, http_options=genai_types.HttpOptions(**options)
        )
        self._models: _GeminiModels = self._client.aio.models

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
        try:
            chunks = await self._models.generate_content_stream(
                model=self.model,
                contents=[genai_types.Content.model_validate(c) for c in contents],
                config=genai_types.GenerateContentConfig.model_validate(config),
            )
            async for chunk in chunks:
                for out in state.handle(chunk):
                    yield out
        except genai_errors.APIError as e:
            raise self._api_error(e) from e
        except ProviderError:
            raise
        except Exception as e:
            mapped = transport_error(e, self.name)
            if mapped is None:
                raise
            raise mapped from e
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

    def _api_error(self, e: genai_errors.APIError) -> ProviderError:
        message = e.message or str(e)
        # The SDK annotates `code` as int but falls back to the body's code, which may be
        # missing; `response` is typed with a class it never imports and `details` is the
        # raw error body, so all three are read as plain objects.
        code = cast(object, e.code)
        status = code if isinstance(code, int) else 500
        response = cast(object, e.response)  # pyright: ignore[reportUnknownMemberType]
        details = cast(object, e.details)  # pyright: ignore[reportUnknownMemberType]
        headers = getattr(response, "headers", None)
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

        return await search_google.search(self._models, self.model, self.name, query)

    async def count_tokens(self, request: LLMRequest) -> int:
        """The API's count of the contents, plus an estimate of the system prompt and
        tools (the Developer API's countTokens accepts neither); all estimated on error."""
        try:
            result = await self._models.count_tokens(
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
        await self._client.aio.aclose()


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
