"""Fixtures for the LLM adapter tests: the fake LLM server and providers pointed at it
through the real registry (the same path the app takes), with short timeouts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from aistack_tui.llm.provider import Provider
from aistack_tui.llm.registry import create_provider, resolve_provider_config
from tests.fakes.fake_llm import FakeLLMServer

MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4.1", "google": "gemini-2.5-pro"}
PROVIDERS = tuple(MODELS)


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


ProviderFactory = Callable[..., Provider]


@pytest.fixture
async def make_provider(fake: FakeLLMServer) -> AsyncIterator[ProviderFactory]:
    """Build a provider of a given kind aimed at the fake server; closed after the test."""
    made: list[Provider] = []

    def build(name: str, model: str | None = None, timeout: float = 5.0) -> Provider:
        config = resolve_provider_config(name, env=fake.env(name))  # type: ignore[arg-type]
        provider = create_provider(config, model or MODELS[name], timeout=timeout)
        made.append(provider)
        return provider

    yield build
    for provider in made:
        await provider.aclose()
