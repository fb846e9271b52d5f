"""Fixtures for the LLM adapter tests: the fake LLM server and providers pointed at it
through the real registry (the same path the app takes), with short timeouts.

Every test that builds a provider runs twice, once per transport: through the official
SDKs and over the lean path (`llm/lean_http.py`); both must behave the same."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from aistack_tui.llm.lean_http import TRANSPORT_ENV
from aistack_tui.llm.provider import Provider
from aistack_tui.llm.registry import create_provider, resolve_provider_config
from fakes.fake_llm import FakeLLMServer

MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4.1", "google": "gemini-2.5-pro"}
PROVIDERS = tuple(MODELS)


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


ProviderFactory = Callable[..., Provider]
TRANSPORTS = ("sdk", "lean")


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The transport every provider built in the test uses (set as the app sets it)."""
    monkeypatch.setenv(TRANSPORT_ENV, request.param)
    return request.param


@pytest.fixture
async def make_provider(fake: FakeLLMServer, transport: str) -> AsyncIterator[ProviderFactory]:
    """Build a provider of a given kind aimed at the fake server; closed after the test."""
    made: list[Provider] = []

    def build(name: str, model: str | None = None, timeout: float = 5.0) -> Provider:
        config = resolve_provider_config(name, env=fake.env(name))  # type: ignore[arg-type]
        provider = create_provider(config, model or MODELS[name], timeout=timeout)
        assert getattr(provider, "transport", None) == transport
        made.append(provider)
        return provider

    yield build
    for provider in made:
        await provider.aclose()
