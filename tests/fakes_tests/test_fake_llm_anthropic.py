"""The fake speaks Anthropic Messages well enough for the real anthropic SDK."""

from __future__ import annotations

import functools
import json

import anthropic
import httpx2
import pytest

from fakes.fake_llm import FakeLLMServer, Fault, ToolCall, Turn

MESSAGES = [{"role": "user", "content": "hello"}]


def client(server: FakeLLMServer, timeout: float = 30) -> anthropic.Anthropic:
    return _client(server.url, timeout)


@functools.cache
def _client(url: str, timeout: float) -> anthropic.Anthropic:
    # Cached: building a client (its SSL context) costs more than most of these tests.
    return anthropic.Anthropic(base_url=url, api_key="fake-key", max_retries=0, timeout=timeout)


def stream_final(c: anthropic.Anthropic) -> anthropic.types.Message:
    with c.messages.stream(model="claude-test", max_tokens=100, messages=MESSAGES) as s:
        for _ in s:
            pass
        return s.get_final_message()


def test_streamed_text_arrives_in_deltas_and_is_recorded(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="Hello from the fake model!", chunk_size=5))
    c = client(fake_llm)
    with c.messages.stream(model="claude-test", max_tokens=100, messages=MESSAGES,
                           system="be brief") as s:
        deltas = list(s.text_stream)
        final = s.get_final_message()
    assert deltas == ["Hello", " from", " the ", "fake ", "model", "!"]
    assert final.content[0].type == "text"
    assert final.content[0].text == "Hello from the fake model!"
    assert final.stop_reason == "end_turn"
    assert final.model == "claude-test"
    rec = fake_llm.requests[0]
    assert (rec.format, rec.path) == ("anthropic", "/v1/messages")
    assert (rec.served, rec.stream) == ("turn", True)
    assert rec.body["messages"] == MESSAGES
    assert rec.body["system"] == "be brief"
    assert rec.api_key == "fake-key"
    assert fake_llm.remaining == 0


def test_parallel_tool_calls_are_reassembled_from_fragments(fake_llm: FakeLLMServer) -> None:
    calls = [ToolCall("Read", {"path": "src/app.py", "limit": 40}, id="toolu_a"),
             ToolCall("Grep", {"pattern": "def main", "glob": "**/*.py"})]
    fake_llm.add(Turn(text="Looking.", tool_calls=calls, chunk_size=4))
    c = client(fake_llm)
    fragments: dict[int, list[str]] = {}
    with c.messages.stream(model="claude-test", max_tokens=100, messages=MESSAGES) as s:
        for event in s:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                fragments.setdefault(event.index, []).append(event.delta.partial_json)
        final = s.get_final_message()
    tools = [b for b in final.content if b.type == "tool_use"]
    assert [(t.id, t.name, t.input) for t in tools] == [
        ("toolu_a", "Read", {"path": "src/app.py", "limit": 40}),
        (tools[1].id, "Grep", {"pattern": "def main", "glob": "**/*.py"}),
    ]
    assert tools[1].id.startswith("toolu_")
    assert tools[1].id != "toolu_a"
    assert all(len([f for f in frags if f]) >= 3 for frags in fragments.values())
    assert final.stop_reason == "tool_use"


def test_thinking_block_streams_with_signature(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(thinking="First, read the file.", text="Done."))
    final = stream_final(client(fake_llm))
    assert final.content[0].type == "thinking"
    assert final.content[0].thinking == "First, read the file."
    assert final.content[0].signature
    assert final.content[1].type == "text"


def test_usage_and_cache_reads_are_reported(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="hi", usage=(1200, 34), cache_read_tokens=800))
    final = stream_final(client(fake_llm))
    assert final.usage.input_tokens == 1200
    assert final.usage.output_tokens == 34
    assert final.usage.cache_read_input_tokens == 800


def test_default_usage_is_estimated_from_sizes(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="x" * 400))
    final = stream_final(client(fake_llm))
    assert final.usage.output_tokens == 100
    assert final.usage.input_tokens >= 1


def test_non_streaming_message_has_all_blocks(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="Sure.", tool_calls=[ToolCall("Bash", {"command": "ls"})],
                      usage=(10, 5)))
    msg = client(fake_llm).messages.create(model="claude-test", max_tokens=50, messages=MESSAGES)
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert msg.content[1].input == {"command": "ls"}
    assert (msg.usage.input_tokens, msg.usage.output_tokens) == (10, 5)
    assert fake_llm.requests[0].stream is False


async def test_async_client_streams_too(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="async works"))
    c = anthropic.AsyncAnthropic(base_url=fake_llm.url, api_key="k", max_retries=0)
    async with c.messages.stream(model="m", max_tokens=10, messages=MESSAGES) as s:
        text = "".join([t async for t in s.text_stream])
    assert text == "async works"


def test_count_tokens_returns_estimate_without_using_a_turn(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="unused"))
    n = client(fake_llm).messages.count_tokens(
        model="m", messages=[{"role": "user", "content": "a" * 400}])
    assert 100 <= n.input_tokens <= 130
    assert fake_llm.remaining == 1
    assert fake_llm.requests[0].served == "info"
    assert fake_llm.model_requests == []


def test_rate_limit_carries_retry_after_then_turn_is_served(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="after the limit", faults=[Fault("http", status=429, retry_after=7)]))
    c = client(fake_llm)
    with pytest.raises(anthropic.RateLimitError) as info:
        stream_final(c)
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.type == "rate_limit_error"
    assert fake_llm.remaining == 1
    assert stream_final(c).content[0].text == "after the limit"
    assert [r.served for r in fake_llm.requests] == ["fault", "turn"]
    assert fake_llm.requests[0].fault is not None


@pytest.mark.parametrize(("status", "error_class", "error_type"), [
    (529, anthropic.OverloadedError, "overloaded_error"),
    (500, anthropic.InternalServerError, "api_error"),
    (503, anthropic.ServiceUnavailableError, "api_error"),
    (401, anthropic.AuthenticationError, "authentication_error"),
    (400, anthropic.BadRequestError, "invalid_request_error"),
])
def test_http_faults_map_to_sdk_error_classes(fake_llm: FakeLLMServer, status: int,
                                              error_class: type, error_type: str) -> None:
    fake_llm.add(Turn(text="ok", faults=[Fault("http", status=status)]))
    with pytest.raises(error_class) as info:
        stream_final(client(fake_llm))
    assert info.value.status_code == status
    assert info.value.type == error_type
    assert "retry-after" not in info.value.response.headers


def test_529_is_an_internal_server_error_too(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(faults=[Fault("http", status=529)]))
    with pytest.raises(anthropic.InternalServerError):
        client(fake_llm).messages.create(model="m", max_tokens=5, messages=MESSAGES)


def test_cut_drops_the_connection_mid_stream(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="The complete answer, eventually.",
                      faults=[Fault("cut", after_chars=6)]))
    c = client(fake_llm)
    seen: list[str] = []

    def read() -> None:
        with c.messages.stream(model="m", max_tokens=50, messages=MESSAGES) as s:
            seen.extend(s.text_stream)

    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        read()
    assert "".join(seen) == "The co"
    assert stream_final(c).content[0].text == "The complete answer, eventually."


def test_cut_on_non_streaming_request_is_a_connection_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="whole", faults=[Fault("cut")]))
    with pytest.raises(anthropic.APIConnectionError):
        client(fake_llm).messages.create(model="m", max_tokens=5, messages=MESSAGES)


def test_in_stream_overloaded_error_event(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="ok", faults=[Fault("in_stream_overloaded")]))
    with pytest.raises(anthropic.APIStatusError) as info:
        stream_final(client(fake_llm))
    assert info.value.type == "overloaded_error"
    assert info.value.body == {"type": "error", "error": {"type": "overloaded_error",
                                                          "message": "Overloaded"}}


def test_malformed_tool_json_fails_the_sdk_parser(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="ok", faults=[Fault("malformed_tool_json")]))
    c = client(fake_llm)
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        stream_final(c)
    # The raw events show what was sent: fragments that do not join into JSON.
    fake_llm.add(Turn(faults=[Fault("malformed_tool_json")]))
    raw = c.messages.create(model="m", max_tokens=5, messages=MESSAGES, stream=True)
    parts = [e.delta.partial_json for e in raw
             if e.type == "content_block_delta" and e.delta.type == "input_json_delta"]
    with pytest.raises(json.JSONDecodeError):
        json.loads("".join(parts))


def test_hang_sends_nothing_until_the_client_times_out(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="late", faults=[Fault("hang"), Fault("hang")]))
    # Headers arrive, so a stream is opened and its first read times out (unwrapped).
    with pytest.raises(httpx2.ReadTimeout):
        stream_final(client(fake_llm, timeout=0.3))
    with pytest.raises(anthropic.APITimeoutError):
        client(fake_llm, timeout=0.3).messages.create(model="m", max_tokens=5, messages=MESSAGES)
    assert stream_final(client(fake_llm)).content[0].text == "late"


def test_x_api_key_header_is_accepted(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="ok"))
    c = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0,
                            default_headers={"Authorization": anthropic.Omit(), "x-api-key": "xk"})
    assert c.messages.create(model="m", max_tokens=5, messages=MESSAGES).content[0].text == "ok"
    assert fake_llm.requests[0].api_key == "xk"
