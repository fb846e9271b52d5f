"""The provider protocol every LLM adapter implements."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from aistack_tui.llm.types import LLMRequest, Message, StreamEvent


@runtime_checkable
class Provider(Protocol):
    """A configured model at one provider.

    `stream` yields the stream events of `llm.types` and always ends with `StreamDone`
    (or raises a `ProviderError`); it never retries by itself: `llm.retry` does, for
    every provider alike.
    """

    name: str
    """The provider name as used in model strings (`anthropic`, `openai`, `ollama`...)."""
    model: str

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]: ...

    async def complete(self, request: LLMRequest) -> Message: ...

    async def count_tokens(self, request: LLMRequest) -> int: ...

    async def aclose(self) -> None: ...
