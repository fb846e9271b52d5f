"""Each adapter streams text, thinking, parallel tool calls and usage from the fake server
through its real SDK, and ends with one complete assistant message."""

from __future__ import annotations

import pytest

from aistack_tui.llm.types import (
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
    ToolSpec,
    ToolUseBlock,
    UsageReported,
)
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.llm.conftest import PROVIDERS, ProviderFactory

READ = ToolSpec(
    name="Read",
    description="Read a file",
    input_schema={"type": "object", "properties": {"file_path": {"type": "string"}}},
)
GLOB = ToolSpec(
    name="Glob",
    description="Find files",
    input_schema={"type": "object", "properties": {"pattern": {"type": "string"}}},
)


async def collect(provider, request: LLMRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


def done_of(events: list[StreamEvent]) -> StreamDone:
    assert isinstance(events[-1], StreamDone), events[-1]
    assert sum(isinstance(e, StreamDone) for e in events) == 1
    return events[-1]


@pytest.mark.parametrize("name", PROVIDERS)
async def test_text_streams_in_deltas_and_ends_with_message(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="The answer is forty-two, of course.", usage=(120, 9), chunk_size=5))
    provider = make_provider(name)
    events = await collect(provider, LLMRequest(messages=[Message.user("question")]))

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3
    assert "".join(deltas) == "The answer is forty-two, of course."
    done = done_of(events)
    message = done.message
    assert message.role == "assistant"
    assert message.text() == "The answer is forty-two, of course."
    assert message.provider == name
    assert message.model == provider.model
    assert message.stop_reason == done.stop_reason == "end_turn"
    assert message.usage is not None
    assert message.usage.input_tokens == 120
    assert message.usage.output_tokens == 9
    reported = [e for e in events if isinstance(e, UsageReported)]
    assert [r.usage for r in reported] == [message.usage]


@pytest.mark.parametrize("name", PROVIDERS)
async def test_parallel_tool_calls_are_assembled_in_order(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(
        text="Looking.",
        tool_calls=[
            ToolCall("Read", {"file_path": "src/app.py"}),
            ToolCall("Glob", {"pattern": "**/*.md", "nested": {"deep": [1, 2]}}),
        ],
        usage=(50, 30),
    ))
    events = await collect(
        make_provider(name), LLMRequest(messages=[Message.user("look")], tools=[READ, GLOB])
    )

    started = [e for e in events if isinstance(e, ToolCallStarted)]
    ended = [e for e in events if isinstance(e, ToolCallEnded)]
    assert [(e.index, e.name) for e in started] == [(0, "Read"), (1, "Glob")]
    assert [(e.index, e.name, e.input) for e in ended] == [
        (0, "Read", {"file_path": "src/app.py"}),
        (1, "Glob", {"pattern": "**/*.md", "nested": {"deep": [1, 2]}}),
    ]
    assert [s.id for s in started] == [e.id for e in ended]
    for index in (0, 1):
        fragments = "".join(
            e.partial_json for e in events if isinstance(e, ToolCallDelta) and e.index == index
        )
        assert fragments.strip(), "tool arguments stream as ToolCallDelta"
    done = done_of(events)
    assert done.stop_reason == "tool_use"
    uses = done.message.tool_uses()
    assert [(u.id, u.name, u.input) for u in uses] == [(e.id, e.name, e.input) for e in ended]
    assert done.extra == {}


@pytest.mark.parametrize("name", PROVIDERS)
async def test_thinking_streams_as_thinking_deltas(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(thinking="First, consider the file.", text="Done."))
    events = await collect(make_provider(name), LLMRequest(messages=[Message.user("hi")]))

    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == (
        "First, consider the file."
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Done."
    message = done_of(events).message
    thinking = [b for b in message.content if isinstance(b, ThinkingBlock)]
    assert "".join(b.thinking for b in thinking) == "First, consider the file."
    if name == "anthropic":
        assert thinking[0].signature, "Anthropic's signature is kept for replay"
    if name == "google":
        assert any(b.signature for b in thinking), "Gemini's thought signature is kept"
    assert isinstance(message.content[-1], TextBlock)


@pytest.mark.parametrize("name", PROVIDERS)
async def test_cached_input_is_reported_as_cache_read(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="ok", usage=(40, 3), cache_read_tokens=1000))
    message = await make_provider(name).complete(LLMRequest(messages=[Message.user("hi")]))

    assert message.usage is not None
    assert message.usage.input_tokens == 40
    assert message.usage.cache_read_input_tokens == 1000
    assert message.usage.output_tokens >= 3


@pytest.mark.parametrize("name", PROVIDERS)
async def test_complete_returns_the_final_message(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(tool_calls=[ToolCall("Read", {"file_path": "a"}, id="call_given_1")]))
    message = await make_provider(name).complete(
        LLMRequest(messages=[Message.user("read a")], tools=[READ])
    )
    assert message.tool_uses() == [ToolUseBlock(id="call_given_1", name="Read",
                                                input={"file_path": "a"})]
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize("name", ["anthropic", "google"])
async def test_count_tokens_uses_the_provider_endpoint(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    request = LLMRequest(system="be brief", messages=[Message.user("x" * 400)], tools=[READ])
    count = await make_provider(name).count_tokens(request)
    assert count > 0
    paths = [r.path for r in fake.requests]
    assert any("count" in p.lower() for p in paths), paths


async def test_count_tokens_estimates_for_openai(
    fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    count = await make_provider("openai").count_tokens(
        LLMRequest(messages=[Message.user("word " * 400)])
    )
    assert 400 <= count <= 700
    assert fake.requests == [], "no network call for an estimate"


async def test_count_tokens_falls_back_to_estimate_when_endpoint_fails(
    make_provider: ProviderFactory,
) -> None:
    from aistack_tui.llm.registry import create_provider, resolve_provider_config

    # Nothing listens on port 9 (discard): the endpoint fails, the estimate answers.
    config = resolve_provider_config(
        "anthropic", env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    )
    provider = create_provider(config, "claude-haiku-4-5", timeout=2)
    try:
        count = await provider.count_tokens(LLMRequest(messages=[Message.user("a" * 800)]))
    finally:
        await provider.aclose()
    assert 190 <= count <= 260
