"""The fake speaks Gemini generateContent well enough for the real google-genai SDK."""

from __future__ import annotations

import functools

import httpx2
import pytest
from google import genai
from google.genai import errors, types

from fakes.fake_llm import FakeLLMServer, Fault, ToolCall, Turn

MODEL = "gemini-test"


def client(server: FakeLLMServer, api_version: str | None = None,
           timeout: int | None = None) -> genai.Client:
    return _client(server.url, api_version, timeout)


@functools.cache
def _client(url: str, api_version: str | None, timeout: int | None) -> genai.Client:
    # Cached: building a client (its SSL context) costs more than most of these tests; the
    # cache also keeps it referenced, as its __del__ closes the HTTP client under a request.
    http: dict[str, object] = {"base_url": url, "timeout": timeout}
    if api_version:
        http["api_version"] = api_version
    return genai.Client(api_key="fake-key", http_options=http)


def stream(c: genai.Client, **kw: object) -> list[types.GenerateContentResponse]:
    return list(c.models.generate_content_stream(model=MODEL, contents="hello", **kw))


def test_streamed_text_arrives_in_chunks_and_is_recorded(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="Hello from the fake model!", chunk_size=5))
    chunks = stream(client(fake_llm))
    assert [c.text for c in chunks] == ["Hello", " from", " the ", "fake ", "model", "!"]
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    rec = fake_llm.requests[0]
    assert rec.format == "google"
    assert rec.path.endswith(f"/models/{MODEL}:streamGenerateContent")
    assert rec.query.get("alt") == "sse"
    assert (rec.served, rec.stream) == ("turn", True)
    assert rec.body["contents"][0]["parts"][0]["text"] == "hello"
    assert rec.headers["x-goog-api-key"] == "fake-key"


@pytest.mark.parametrize("api_version", ["v1", "v1beta"])
def test_both_api_versions_are_served(fake_llm: FakeLLMServer, api_version: str) -> None:
    fake_llm.add(Turn(text="ok"))
    c = client(fake_llm, api_version=api_version)
    r = c.models.generate_content(model=MODEL, contents="hi")
    assert r.text == "ok"
    assert fake_llm.requests[0].path == f"/{api_version}/models/{MODEL}:generateContent"


def test_parallel_function_calls_with_ids(fake_llm: FakeLLMServer) -> None:
    calls = [ToolCall("Read", {"path": "src/app.py"}, id="fc_a"),
             ToolCall("Grep", {"pattern": "def main"})]
    fake_llm.add(Turn(text="Looking.", tool_calls=calls))
    chunks = stream(client(fake_llm))
    got = [fc for c in chunks for fc in (c.function_calls or [])]
    assert [(f.id, f.name, f.args) for f in got] == [
        ("fc_a", "Read", {"path": "src/app.py"}), (got[1].id, "Grep", {"pattern": "def main"})]
    assert got[1].id
    assert got[1].id != "fc_a"
    assert "".join(c.text or "" for c in chunks if not c.function_calls) == "Looking."


def test_thoughts_stream_with_signature(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(thinking="consider it", text="answer"))
    parts = [p for c in stream(client(fake_llm)) for p in c.candidates[0].content.parts]
    assert "".join(p.text for p in parts if p.thought) == "consider it"
    first_answer = next(p for p in parts if not p.thought)
    assert first_answer.thought_signature


def test_usage_metadata_is_reported(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="hi", usage=(1200, 34), cache_read_tokens=800))
    usage = stream(client(fake_llm))[-1].usage_metadata
    assert usage.prompt_token_count == 2000  # Gemini counts cached tokens inside the prompt
    assert usage.cached_content_token_count == 800
    assert usage.candidates_token_count == 34
    assert usage.total_token_count == 2034


def test_non_streaming_merges_parts(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="Sure, running it.", tool_calls=[ToolCall("Bash", {"command": "ls"})],
                      chunk_size=3, usage=(10, 5)))
    c = client(fake_llm)
    r = c.models.generate_content(model=MODEL, contents="hi")
    parts = r.candidates[0].content.parts
    assert parts[0].text == "Sure, running it."
    assert parts[1].function_call.args == {"command": "ls"}
    assert r.usage_metadata.candidates_token_count == 5
    assert fake_llm.requests[0].stream is False


async def test_async_client_streams_too(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="async works"))
    c = client(fake_llm)
    text = "".join([ch.text or "" async for ch in
                    await c.aio.models.generate_content_stream(model=MODEL, contents="x")])
    assert text == "async works"


def test_count_tokens_does_not_use_a_turn(fake_llm: FakeLLMServer) -> None:
    c = client(fake_llm)
    r = c.models.count_tokens(model=MODEL, contents="a" * 400)
    assert r.total_tokens >= 100
    assert fake_llm.model_requests == []


def test_env_points_the_sdk_here(fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in fake_llm.env("google").items():
        monkeypatch.setenv(key, value)
    fake_llm.add(Turn(text="via env"))
    c = genai.Client()
    assert c.models.generate_content(model=MODEL, contents="hi").text == "via env"


@pytest.mark.parametrize(("status", "error_class", "gstatus"), [
    (429, errors.ClientError, "RESOURCE_EXHAUSTED"),
    (400, errors.ClientError, "INVALID_ARGUMENT"),
    (401, errors.ClientError, "UNAUTHENTICATED"),
    (500, errors.ServerError, "INTERNAL"),
    (503, errors.ServerError, "UNAVAILABLE"),
])
def test_http_faults_map_to_sdk_error_classes(fake_llm: FakeLLMServer, status: int,
                                              error_class: type, gstatus: str) -> None:
    fake_llm.add(Turn(text="ok", faults=[Fault("http", status=status, retry_after=3)]))
    with pytest.raises(error_class) as info:
        stream(client(fake_llm))
    assert (info.value.code, info.value.status) == (status, gstatus)
    assert info.value.response.headers["retry-after"] == "3"
    # google-genai does not retry by itself: one request, then the turn is still queued.
    assert len(fake_llm.requests) == 1
    assert stream(client(fake_llm))[0].text == "ok"


def test_cut_drops_the_connection_mid_stream(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="The complete answer.", faults=[Fault("cut", after_chars=4)]))
    seen: list[str] = []
    c = client(fake_llm)

    def read() -> None:
        for chunk in c.models.generate_content_stream(model=MODEL, contents="x"):
            seen.append(chunk.text or "")

    with pytest.raises(httpx2.RemoteProtocolError):
        read()
    assert "".join(seen) == "The "


def test_in_stream_overloaded_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(faults=[Fault("in_stream_overloaded")]))
    with pytest.raises(errors.ServerError) as info:
        stream(client(fake_llm))
    assert (info.value.code, info.value.status) == (503, "UNAVAILABLE")


def test_malformed_function_call_finish_reason(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(faults=[Fault("malformed_tool_json")]))
    last = stream(client(fake_llm))[-1]
    assert last.candidates[0].finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL
    assert not last.function_calls


def test_hang_times_out(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(faults=[Fault("hang")]))
    with pytest.raises(httpx2.ReadTimeout):
        stream(client(fake_llm, timeout=300))  # milliseconds
