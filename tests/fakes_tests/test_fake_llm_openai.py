"""The fake speaks OpenAI Chat Completions well enough for the real openai SDK."""

from __future__ import annotations

import functools
import json

import openai
import pytest

from fakes.fake_llm import FakeLLMServer, Fault, ToolCall, Turn

MESSAGES = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "Read", "parameters": {"type": "object"}}}]


def client(server: FakeLLMServer, timeout: float = 30) -> openai.OpenAI:
    return _client(server.url, timeout)


@functools.cache
def _client(url: str, timeout: float) -> openai.OpenAI:
    # Cached: building a client (its SSL context) costs more than most of these tests.
    return openai.OpenAI(base_url=url + "/v1", api_key="fake-key", max_retries=0, timeout=timeout)


def stream_final(c: openai.OpenAI, **kw: object):  # -> ParsedChatCompletion
    with c.chat.completions.stream(model="gpt-test", messages=MESSAGES,
                                   stream_options={"include_usage": True}, **kw) as s:
        for _ in s:
            pass
        return s.get_final_completion()


def test_streamed_text_arrives_in_deltas_and_is_recorded(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="Hello from the fake model!", chunk_size=5))
    raw = client(fake_llm).chat.completions.create(model="gpt-test", messages=MESSAGES, stream=True)
    chunks = list(raw)
    deltas = [c.choices[0].delta.content for c in chunks
              if c.choices and c.choices[0].delta.content]
    assert deltas == ["Hello", " from", " the ", "fake ", "model", "!"]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)  # no usage chunk unless asked for
    rec = fake_llm.requests[0]
    assert (rec.format, rec.path, rec.served, rec.stream) == ("openai", "/v1/chat/completions",
                                                              "turn", True)
    assert rec.body["messages"] == MESSAGES
    assert rec.api_key == "fake-key"


def test_parallel_tool_calls_are_reassembled_from_fragments(fake_llm: FakeLLMServer) -> None:
    calls = [ToolCall("Read", {"path": "src/app.py"}, id="call_a"),
             ToolCall("Grep", {"pattern": "def main", "glob": "**/*.py"})]
    fake_llm.add(Turn(tool_calls=calls, chunk_size=4))
    c = client(fake_llm)
    fragments: dict[int, list[str]] = {}
    with c.chat.completions.stream(model="gpt-test", messages=MESSAGES, tools=TOOLS) as s:
        for event in s:
            if event.type != "chunk" or not event.chunk.choices:
                continue
            for tc in event.chunk.choices[0].delta.tool_calls or []:
                if tc.function and tc.function.arguments:
                    fragments.setdefault(tc.index, []).append(tc.function.arguments)
        final = s.get_final_completion()
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    got = [(t.id, t.function.name, json.loads(t.function.arguments))
           for t in choice.message.tool_calls]
    assert got == [("call_a", "Read", {"path": "src/app.py"}),
                   (got[1][0], "Grep", {"pattern": "def main", "glob": "**/*.py"})]
    assert got[1][0].startswith("call_")
    assert got[1][0] != "call_a"
    assert sorted(fragments) == [0, 1]
    assert all(len(f) >= 3 for f in fragments.values())


def test_usage_chunk_comes_last_when_asked_for(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="hi", usage=(1200, 34), cache_read_tokens=800))
    final = stream_final(client(fake_llm))
    assert final.usage is not None
    assert final.usage.prompt_tokens == 2000  # OpenAI counts cached tokens inside prompt_tokens
    assert final.usage.prompt_tokens_details.cached_tokens == 800
    assert final.usage.completion_tokens == 34
    assert final.usage.total_tokens == 2034


def test_thinking_arrives_as_reasoning_content(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(thinking="pondering", text="answer"))
    raw = client(fake_llm).chat.completions.create(model="m", messages=MESSAGES, stream=True)
    chunks = [c for c in raw if c.choices]
    reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or ""
                        for c in chunks)
    assert reasoning == "pondering"


def test_non_streaming_completion(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="Sure.", tool_calls=[ToolCall("Bash", {"command": "ls"})],
                      usage=(10, 5)))
    r = client(fake_llm).chat.completions.create(model="gpt-test", messages=MESSAGES)
    msg = r.choices[0].message
    assert msg.content == "Sure."
    assert json.loads(msg.tool_calls[0].function.arguments) == {"command": "ls"}
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (10, 5)


async def test_async_client_streams_too(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="async works"))
    c = openai.AsyncOpenAI(base_url=fake_llm.url + "/v1", api_key="k", max_retries=0)
    stream = await c.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    text = "".join([ch.choices[0].delta.content or "" async for ch in stream if ch.choices])
    assert text == "async works"


def test_models_are_listed(fake_llm: FakeLLMServer) -> None:
    ids = [m.id for m in client(fake_llm).models.list()]
    assert "gpt-6.1-sol" in ids and "text-embedding-3-large" in ids
    assert fake_llm.model_requests == []


def test_rate_limit_carries_retry_after_then_turn_is_served(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="after", faults=[Fault("http", status=429, retry_after=2.5)]))
    c = client(fake_llm)
    with pytest.raises(openai.RateLimitError) as info:
        stream_final(c)
    assert info.value.response.headers["retry-after"] == "2.5"
    assert info.value.code == "rate_limit_exceeded"
    assert stream_final(c).choices[0].message.content == "after"


@pytest.mark.parametrize(("status", "error_class"), [
    (500, openai.InternalServerError),
    (503, openai.InternalServerError),
    (401, openai.AuthenticationError),
    (400, openai.BadRequestError),
])
def test_http_faults_map_to_sdk_error_classes(fake_llm: FakeLLMServer, status: int,
                                              error_class: type) -> None:
    fake_llm.add(Turn(faults=[Fault("http", status=status)]))
    with pytest.raises(error_class) as info:
        stream_final(client(fake_llm))
    assert info.value.status_code == status
    assert set(info.value.body) >= {"message", "type", "code"}


def test_cut_is_a_connection_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="The complete answer.",
                      faults=[Fault("cut", after_chars=4), Fault("cut")]))
    c = client(fake_llm)
    seen: list[str] = []

    def read() -> None:
        for chunk in c.chat.completions.create(model="m", messages=MESSAGES, stream=True):
            seen.append(chunk.choices[0].delta.content or "")

    with pytest.raises(openai.APIConnectionError):
        read()
    assert "".join(seen) == "The "
    with pytest.raises(openai.APIConnectionError):
        c.chat.completions.create(model="m", messages=MESSAGES)
    assert stream_final(c).choices[0].message.content == "The complete answer."


def test_in_stream_overloaded_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(faults=[Fault("in_stream_overloaded")]))
    with pytest.raises(openai.APIError, match="overloaded") as info:
        stream_final(client(fake_llm))
    assert not isinstance(info.value, openai.APIStatusError)
    assert info.value.type == "server_error"


def test_malformed_tool_json_reaches_the_caller_as_a_string(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(faults=[Fault("malformed_tool_json")]))
    final = stream_final(client(fake_llm), tools=TOOLS)
    args = final.choices[0].message.tool_calls[0].function.arguments
    with pytest.raises(json.JSONDecodeError):
        json.loads(args)


def test_hang_times_out(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="late", faults=[Fault("hang"), Fault("hang")]))
    c = client(fake_llm, timeout=0.3)
    with pytest.raises(openai.APITimeoutError):
        list(c.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    with pytest.raises(openai.APITimeoutError):
        c.chat.completions.create(model="m", messages=MESSAGES)
    assert stream_final(client(fake_llm)).choices[0].message.content == "late"
