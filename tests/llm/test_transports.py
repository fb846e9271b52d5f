"""The lean transport is wire-identical to the SDK path: the fake server receives the same
request bodies and the same headers that matter, and every fault becomes the same error
with the same message, whichever path sent the request."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.registry import create_provider, resolve_provider_config
from aistack_tui.llm.types import (
    LLMRequest,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from fakes.fake_llm import FakeLLMServer, Fault, RecordedRequest, Turn
from tests.llm.conftest import MODELS, PROVIDERS
from tests.llm.test_requests import tool_history
from tests.llm.test_streaming import GLOB, READ

TELEMETRY = ("x-stainless-",)
"""Headers the SDKs add about themselves; no server acts on them."""
NOT_COMPARED = {"host", "content-length", "connection"}
SDK_NAMED = {"anthropic": {"user-agent"}, "openai": {"user-agent"}, "google": set()}
"""The Anthropic and OpenAI SDKs name themselves in user-agent; the lean path names
aistack's HTTP library instead."""


def signed_history(provider: str) -> list[Message]:
    """The tool history with thinking signed by `provider` in the assistant turn."""
    history = tool_history()
    history[1].provider = provider
    signature = base64.b64encode(b"signature-bytes").decode()
    history[1].content.insert(0, ThinkingBlock(thinking="Let me look.", signature=signature))
    history.append(Message(role="assistant", provider=provider, content=[
        TextBlock(text="Both read."),
        ToolUseBlock(id="toolu_01C", name="Glob", input={"pattern": "*.py"}),
    ]))
    return history


REQUESTS = {
    "plain": lambda name: LLMRequest(messages=[Message.user("hello")]),
    "system, tools, options": lambda name: LLMRequest(
        system="You are terse.", messages=[Message.user("look")], tools=[READ, GLOB],
        max_tokens=900, temperature=0.2, stop_sequences=["END"]),
    "images, tool results, signed thinking": lambda name: LLMRequest(
        system="You are terse.", messages=signed_history(name), tools=[READ, GLOB]),
}


async def record(fake: FakeLLMServer, name: str, transport: str, request: LLMRequest,
                 **options: Any) -> RecordedRequest:
    config = resolve_provider_config(name, env=fake.env(name))  # type: ignore[arg-type]
    provider = create_provider(config, MODELS[name], timeout=5, transport=transport, **options)
    assert getattr(provider, "transport", None) == transport
    fake.add(Turn(text="ok", thinking="hm"))
    try:
        await provider.complete(request)
    finally:
        await provider.aclose()
    return fake.model_requests[-1]


def compared_headers(name: str, recorded: RecordedRequest) -> dict[str, str]:
    skip = NOT_COMPARED | SDK_NAMED[name]
    return {k: v for k, v in recorded.headers.items()
            if k not in skip and not k.startswith(TELEMETRY)}


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("case", list(REQUESTS))
async def test_lean_request_is_the_sdk_request(
    name: str, case: str, fake: FakeLLMServer
) -> None:
    sdk = await record(fake, name, "sdk", REQUESTS[case](name))
    lean = await record(fake, name, "lean", REQUESTS[case](name))
    assert (lean.method, lean.path, lean.query) == (sdk.method, sdk.path, sdk.query)
    assert lean.body == sdk.body
    assert compared_headers(name, lean) == compared_headers(name, sdk)


async def test_lean_thinking_request_is_the_sdk_request(fake: FakeLLMServer) -> None:
    request = LLMRequest(messages=[Message.user("think")], max_tokens=16000, temperature=0.3)
    sdk = await record(fake, "anthropic", "sdk", request, thinking_budget=4000)
    lean = await record(fake, "anthropic", "lean", request, thinking_budget=4000)
    assert lean.body == sdk.body
    assert lean.body["thinking"] == {"type": "enabled", "budget_tokens": 4000}


async def test_openai_compatible_server_gets_the_same_request(fake: FakeLLMServer) -> None:
    config = resolve_provider_config(
        "ollama", provider_overrides={"ollama": {"base_url": fake.url + "/v1"}}, env={})
    bodies = []
    for transport in ("sdk", "lean"):
        provider = create_provider(config, "qwen2.5-coder", timeout=5, transport=transport)
        fake.add(Turn(text="ok"))
        try:
            await provider.complete(REQUESTS["system, tools, options"]("ollama"))
        finally:
            await provider.aclose()
        bodies.append(fake.model_requests[-1])
    sdk, lean = bodies
    assert lean.body == sdk.body
    assert lean.path == sdk.path == "/v1/chat/completions"
    assert compared_headers("openai", lean) == compared_headers("openai", sdk)
    assert lean.api_key == "not-needed"


FAULTS = {
    "429 with retry-after": Fault("http", status=429, retry_after=2),
    "400": Fault("http", status=400),
    "500": Fault("http", status=500),
    "529": Fault("http", status=529),
    "cut mid-stream": Fault("cut", after_chars=10),
    "in-stream overloaded": Fault("in_stream_overloaded"),
    "hang": Fault("hang"),
}


async def first_error(fake: FakeLLMServer, name: str, transport: str, fault: Fault
                      ) -> ProviderError:
    config = resolve_provider_config(name, env=fake.env(name))  # type: ignore[arg-type]
    # A short timeout only where the timeout is the point: a busy host is slow.
    timeout = 0.5 if fault.kind == "hang" else 5
    provider = create_provider(config, MODELS[name], timeout=timeout, transport=transport)
    fake.add(Turn(text="The answer that the fault interrupts.", faults=[fault]))
    try:
        with pytest.raises(ProviderError) as info:
            async for _ in provider.stream(LLMRequest(messages=[Message.user("hi")])):
                pass
    finally:
        await provider.aclose()
        fake.reset()
    assert info.value.__cause__ is not None
    return info.value


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("fault", list(FAULTS))
async def test_lean_errors_are_the_sdk_errors(name: str, fault: str, fake: FakeLLMServer
                                              ) -> None:
    sdk = await first_error(fake, name, "sdk", FAULTS[fault])
    lean = await first_error(fake, name, "lean", FAULTS[fault])
    assert type(lean) is type(sdk)
    assert str(lean) == str(sdk)
    assert (lean.status_code, lean.retry_after) == (sdk.status_code, sdk.retry_after)


def test_sdk_path_is_the_fallback_without_a_key() -> None:
    """A custom Anthropic-format provider without a key: the SDK finds credentials."""
    from aistack_tui.llm.anthropic import AnthropicProvider

    assert AnthropicProvider("m", api_key=None, transport="lean").transport == "sdk"
    assert AnthropicProvider("m", api_key="k", transport="lean").transport == "lean"
    assert AnthropicProvider("m", api_key="k", transport="sdk").transport == "sdk"


def test_transport_defaults_to_lean_and_the_variable_selects_the_sdk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aistack_tui.llm.lean_http import TRANSPORT_ENV, default_transport

    monkeypatch.delenv(TRANSPORT_ENV, raising=False)
    assert default_transport() == "lean"
    monkeypatch.setenv(TRANSPORT_ENV, "SDK")
    assert default_transport() == "sdk"


def test_lean_constants_match_the_installed_sdks() -> None:
    """The API version and client name the lean path sends are the SDKs' own."""
    from anthropic._constants import ANTHROPIC_API_VERSION
    from google.genai import version as genai_version

    from aistack_tui.llm import anthropic as lean_anthropic
    from aistack_tui.llm import google as lean_google

    assert lean_anthropic.API_VERSION == ANTHROPIC_API_VERSION
    assert genai_version.__version__ == lean_google.SDK_VERSION


def test_a_lean_stream_imports_no_sdk(fake: FakeLLMServer) -> None:
    """The point of the lean path: streaming from all three imports none of the SDKs."""
    import json
    import subprocess
    import sys

    code = f"""
import asyncio, sys
from aistack_tui.llm.registry import create_provider, resolve_provider_config
from aistack_tui.llm.types import LLMRequest, Message
async def main():
    for name, model, env in {[(n, MODELS[n], fake.env(n)) for n in PROVIDERS]!r}:
        provider = create_provider(resolve_provider_config(name, env=env), model, timeout=5)
        await provider.complete(LLMRequest(messages=[Message.user("hi")]))
        await provider.aclose()
asyncio.run(main())
print([m for m in ("anthropic", "openai", "google.genai") if m in sys.modules])
"""
    fake.add(Turn(text="a"), Turn(text="b"), Turn(text="c"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env={**__import__("os").environ,
                                              "AISTACK_LLM_TRANSPORT": "lean"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().replace("'", '"')) == []
    assert len(fake.model_requests) == 3
