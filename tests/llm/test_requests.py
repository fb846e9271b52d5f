"""What each provider's server actually receives: system prompt, tools, prompt caching,
tool results, images and thinking, translated from one provider-neutral history."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from aistack_tui.llm.types import (
    ImageBlock,
    LLMRequest,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from fakes.fake_llm import FakeLLMServer, Turn
from tests.llm.conftest import ProviderFactory
from tests.llm.test_streaming import GLOB, READ

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()
CACHE = {"type": "ephemeral"}


def tool_history() -> list[Message]:
    """A user asks, the assistant calls Read twice in parallel, the results come back
    (one an error, one with an image), and the user adds a remark."""
    return [
        Message(role="user", content=[
            TextBlock(text="What is in these files?"),
            ImageBlock(media_type="image/png", data=PNG),
        ]),
        Message(role="assistant", provider="anthropic", model="claude-haiku-4-5", content=[
            TextBlock(text="Reading both."),
            ToolUseBlock(id="toolu_01A", name="Read", input={"file_path": "a.py"}),
            ToolUseBlock(id="toolu_01B", name="Read", input={"file_path": "b.png"}),
        ]),
        Message(role="user", content=[
            ToolResultBlock(tool_use_id="toolu_01A", content="no such file", is_error=True),
            ToolResultBlock(tool_use_id="toolu_01B", content=[
                TextBlock(text="an image"), ImageBlock(media_type="image/png", data=PNG)]),
            TextBlock(text="Be brief."),
        ]),
    ]


def camel(obj: Any) -> Any:
    """google-genai sends some nested keys in snake_case (`mime_type`), which Google's
    proto-JSON parser accepts as well as camelCase; compare in one spelling."""
    if isinstance(obj, dict):
        return {
            _camel_key(k): v if k in ("args", "response") else camel(v) for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [camel(v) for v in obj]
    return obj


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


async def send(provider: Any, fake: FakeLLMServer, request: LLMRequest) -> dict[str, Any]:
    fake.add(Turn(text="ok"))
    await provider.complete(request)
    body = fake.model_requests[-1].body
    assert isinstance(body, dict)
    return body


async def test_anthropic_request_has_cache_breakpoints_and_tool_results(
    fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    request = LLMRequest(system="You are terse.", messages=tool_history(), tools=[READ, GLOB],
                         max_tokens=1000, temperature=0.2, stop_sequences=["END"])
    body = await send(make_provider("anthropic"), fake, request)

    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": CACHE}]
    assert [t["name"] for t in body["tools"]] == ["Read", "Glob"]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][-1]["cache_control"] == CACHE
    assert body["tools"][0]["input_schema"] == READ.input_schema
    assert body["max_tokens"] == 1000
    assert body["temperature"] == 0.2
    assert body["stop_sequences"] == ["END"]
    assert body["stream"] is True

    user, assistant, results = body["messages"]
    assert user["content"][1] == {
        "type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert assistant["content"][1] == {
        "type": "tool_use", "id": "toolu_01A", "name": "Read", "input": {"file_path": "a.py"}}
    first, second, remark = results["content"]
    assert first == {"type": "tool_result", "tool_use_id": "toolu_01A",
                     "content": "no such file", "is_error": True}
    assert second["tool_use_id"] == "toolu_01B"
    assert [p["type"] for p in second["content"]] == ["text", "image"]
    assert remark == {"type": "text", "text": "Be brief.", "cache_control": CACHE}


async def test_anthropic_replays_only_its_own_signed_thinking(
    fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    messages = [
        Message.user("go"),
        Message(role="assistant", provider="anthropic", content=[
            ThinkingBlock(thinking="signed thought", signature="sig-abc"),
            ThinkingBlock(thinking="", signature="redacted:ENCRYPTED"),
            TextBlock(text="first"),
        ]),
        Message.user("again"),
        Message(role="assistant", provider="openai", content=[
            ThinkingBlock(thinking="unsigned reasoning from elsewhere"),
            TextBlock(text="second"),
        ]),
        Message(role="assistant", provider="google", content=[
            ThinkingBlock(thinking="", signature="Z2VtaW5pLXNpZw=="),
            TextBlock(text="   "),
        ]),
        Message.user("more"),
    ]
    body = await send(make_provider("anthropic"), fake, LLMRequest(messages=messages))

    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    own = body["messages"][1]["content"]
    assert own[0] == {"type": "thinking", "thinking": "signed thought", "signature": "sig-abc"}
    assert own[1] == {"type": "redacted_thinking", "data": "ENCRYPTED"}
    foreign = body["messages"][3]["content"]
    assert foreign == [{"type": "text", "text": "second"}]


async def test_openai_request_maps_tool_results_to_tool_messages(
    fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    request = LLMRequest(system="You are terse.", messages=tool_history(), tools=[READ],
                         max_tokens=500, stop_sequences=["END"])
    body = await send(make_provider("openai"), fake, request)

    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 500
    assert body["stop"] == ["END"]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "Read", "description": "Read a file", "parameters": READ.input_schema}}]
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert messages[1]["content"] == [
        {"type": "text", "text": "What is in these files?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    assistant = messages[2]
    assert assistant["content"] == "Reading both."
    assert [c["id"] for c in assistant["tool_calls"]] == ["toolu_01A", "toolu_01B"]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "Read", "arguments": '{"file_path": "a.py"}'}
    assert messages[3] == {"role": "tool", "tool_call_id": "toolu_01A",
                           "content": "Error: no such file"}
    assert messages[4]["role"] == "tool"
    assert messages[4]["tool_call_id"] == "toolu_01B"
    # The image a tool returned follows in a user message, with the user's remark.
    follow = messages[5]
    assert follow["role"] == "user"
    kinds = [p["type"] for p in follow["content"]]
    assert kinds == ["text", "image_url", "text"]
    assert follow["content"][-1]["text"] == "Be brief."
    assert len(messages) == 6


async def test_openai_compatible_vendor_uses_max_tokens_and_placeholder_key(
    fake: FakeLLMServer, transport: str,
) -> None:
    from aistack_tui.llm.registry import create_provider, resolve_provider_config

    config = resolve_provider_config(
        "ollama", provider_overrides={"ollama": {"base_url": fake.url + "/v1"}}, env={}
    )
    provider = create_provider(config, "qwen2.5-coder", timeout=5)
    try:
        body = await send(provider, fake, LLMRequest(messages=[Message.user("hi")]))
    finally:
        await provider.aclose()
    assert body["max_tokens"] == 8192
    assert "max_completion_tokens" not in body
    assert fake.model_requests[-1].api_key == "not-needed"


async def test_google_request_names_function_responses_from_history(
    fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    request = LLMRequest(system="You are terse.", messages=tool_history(), tools=[READ, GLOB],
                         max_tokens=700, temperature=0.5)
    body = camel(await send(make_provider("google"), fake, request))

    assert fake.model_requests[-1].path.startswith("/v1beta/models/gemini-2.5-pro:")
    assert body["systemInstruction"]["parts"] == [{"text": "You are terse."}]
    declarations = body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["Read", "Glob"]
    config = body["generationConfig"]
    assert config["maxOutputTokens"] == 700
    assert config["temperature"] == 0.5

    user, model, results = body["contents"]
    assert user["role"] == "user"
    assert user["parts"][1]["inlineData"] == {"mimeType": "image/png", "data": PNG}
    assert model["role"] == "model"
    assert model["parts"][1]["functionCall"] == {
        "id": "toolu_01A", "name": "Read", "args": {"file_path": "a.py"}}
    first, second = (p["functionResponse"] for p in results["parts"][:2])
    assert first == {"id": "toolu_01A", "name": "Read", "response": {"error": "no such file"}}
    assert second["name"] == "Read"
    assert second["response"] == {"output": "an image\n[image image/png]"}
    assert results["parts"][2] == {"inlineData": {"mimeType": "image/png", "data": PNG}}
    assert results["parts"][3] == {"text": "Be brief."}


@pytest.mark.parametrize("model", ["gemini-2.0-flash", "gemini-2.5-flash"])
async def test_google_asks_for_thoughts_only_from_thinking_models(
    model: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    body = camel(await send(make_provider("google", model), fake,
                            LLMRequest(messages=[Message.user("hi")])))
    thinking = body["generationConfig"].get("thinkingConfig")
    assert (thinking is not None) == ("2.5" in model)


async def test_anthropic_thinking_budget_enables_thinking_without_temperature(
    fake: FakeLLMServer, transport: str,
) -> None:
    from aistack_tui.llm.registry import create_provider, resolve_provider_config

    config = resolve_provider_config("anthropic", env=fake.env("anthropic"))
    provider = create_provider(config, "claude-haiku-4-5", timeout=5, thinking_budget=4000)
    try:
        body = await send(provider, fake, LLMRequest(
            messages=[Message.user("think")], max_tokens=16000, temperature=0.3))
    finally:
        await provider.aclose()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert "temperature" not in body, "the API rejects temperature with thinking"
