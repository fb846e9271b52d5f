"""Every fault the fake server can serve maps onto our error hierarchy, and
`stream_with_retry` retries exactly the retryable ones from the start."""

from __future__ import annotations

import pytest

from aistack_tui.llm.errors import (
    AuthError,
    BadRequestError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from aistack_tui.llm.json_repair import INVALID_TOOL_INPUT
from aistack_tui.llm.retry import RetryPolicy, stream_with_retry
from aistack_tui.llm.types import (
    LLMRequest,
    Message,
    StreamDone,
    StreamEvent,
    StreamRetrying,
    TextDelta,
    ToolCallEnded,
)
from fakes.fake_llm import FakeLLMServer, Fault, Turn
from tests.llm.conftest import PROVIDERS, ProviderFactory
from tests.llm.test_streaming import READ

POLICY = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.5, jitter=0.0)
REQUEST = LLMRequest(messages=[Message.user("hi")], tools=[READ])


class RecordingSleep:
    """Records the delays the retry layer asks for without waiting for them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


async def run(provider, policy: RetryPolicy = POLICY) -> tuple[list[StreamEvent], RecordingSleep]:
    sleep = RecordingSleep()
    events = [e async for e in stream_with_retry(provider, REQUEST, policy, sleep=sleep)]
    return events, sleep


async def first_error(provider) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        async for _ in provider.stream(REQUEST):
            pass
    assert info.value.__cause__ is not None, "SDK errors are chained with `from`"
    return info.value


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, BadRequestError),
        (401, AuthError),
        (403, AuthError),
        (404, BadRequestError),
        (429, RateLimitError),
        (500, ServerError),
        (503, ServerError),
        (529, OverloadedError),
    ],
)
async def test_http_status_maps_to_error_class(
    name: str, status: int, error_class: type[ProviderError],
    fake: FakeLLMServer, make_provider: ProviderFactory,
) -> None:
    fake.add(Turn(text="never", faults=[Fault("http", status=status)]))
    error = await first_error(make_provider(name))
    assert type(error) is error_class
    assert error.status_code == status
    assert error.provider == name
    assert error.retryable == (status not in (400, 401, 403, 404))


@pytest.mark.parametrize("name", PROVIDERS)
async def test_rate_limit_is_retried_after_retry_after(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="finally", faults=[Fault("http", status=429, retry_after=0.25)]))
    events, sleep = await run(make_provider(name))

    retrying = [e for e in events if isinstance(e, StreamRetrying)]
    assert len(retrying) == 1
    assert isinstance(retrying[0].error, RateLimitError)
    assert retrying[0].error.retry_after == pytest.approx(0.25)
    assert retrying[0].attempt == 1
    assert retrying[0].delay == pytest.approx(0.25), "retry-after beats the 0.01 s backoff"
    assert sleep.delays == [retrying[0].delay]
    assert isinstance(events[-1], StreamDone)
    assert events[-1].message.text() == "finally"
    assert len(fake.model_requests) == 2


@pytest.mark.parametrize("name", PROVIDERS)
async def test_non_retryable_error_is_raised_at_once(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="never", faults=[Fault("http", status=400)]))
    with pytest.raises(BadRequestError):
        await run(make_provider(name))
    assert len(fake.model_requests) == 1


@pytest.mark.parametrize("name", PROVIDERS)
async def test_cut_stream_is_a_connection_error_and_retried_from_the_start(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="The complete answer arrives on the second try.",
                  faults=[Fault("cut", after_chars=10)]))
    provider = make_provider(name)
    events, _ = await run(provider)

    cut = next(i for i, e in enumerate(events) if isinstance(e, StreamRetrying))
    assert isinstance(events[cut], StreamRetrying)
    assert isinstance(events[cut].error, ProviderConnectionError)
    assert any(isinstance(e, TextDelta) for e in events[:cut]), "partial text came first"
    assert [e for e in events[:cut] if isinstance(e, StreamDone)] == []
    after = "".join(e.text for e in events[cut:] if isinstance(e, TextDelta))
    assert after == "The complete answer arrives on the second try."
    dones = [e for e in events if isinstance(e, StreamDone)]
    assert len(dones) == 1
    assert dones[0].message.text() == after


@pytest.mark.parametrize("name", PROVIDERS)
async def test_in_stream_overload_is_an_overloaded_error(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="after the overload", faults=[Fault("in_stream_overloaded")] * 2))
    provider = make_provider(name)
    error = await first_error(provider)
    assert isinstance(error, OverloadedError)
    assert error.retryable

    events, _ = await run(provider)
    assert [type(e.error) for e in events if isinstance(e, StreamRetrying)] == [OverloadedError]
    assert isinstance(events[-1], StreamDone)


@pytest.mark.parametrize("name", PROVIDERS)
async def test_hanging_stream_times_out_and_is_retried(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="awake", faults=[Fault("hang")]))
    events, _ = await run(make_provider(name, timeout=0.3))
    retrying = [e for e in events if isinstance(e, StreamRetrying)]
    assert len(retrying) == 1
    assert isinstance(retrying[0].error, ProviderTimeoutError | ProviderConnectionError)
    assert isinstance(events[-1], StreamDone)
    assert events[-1].message.text() == "awake"


@pytest.mark.parametrize("name", PROVIDERS)
async def test_retries_exhausted_raise_the_last_error(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="never", faults=[Fault("http", status=503)] * 3))
    policy = RetryPolicy(max_retries=2, base_delay=0.01, jitter=0.0)
    sleep = RecordingSleep()
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in stream_with_retry(make_provider(name), REQUEST, policy, sleep=sleep):
            seen.append(event)

    with pytest.raises(ServerError):
        await consume()
    assert [e.attempt for e in seen if isinstance(e, StreamRetrying)] == [1, 2]
    assert sleep.delays == [pytest.approx(0.01), pytest.approx(0.02)]
    assert len(fake.model_requests) == 3


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_malformed_tool_json_is_repaired(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(faults=[Fault("malformed_tool_json")]))
    events = [e async for e in make_provider(name).stream(REQUEST)]
    (ended,) = [e for e in events if isinstance(e, ToolCallEnded)]
    # '{"path": "notes.txt",, "content": }': the doubled comma goes, the missing value is "".
    assert ended.input == {"path": "notes.txt", "content": ""}
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.message.tool_uses()[0].input == ended.input
    assert INVALID_TOOL_INPUT not in done.extra


@pytest.mark.parametrize("name", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Truncated: the stream ended inside the string; its newlines are kept.
        ('{"path": "a.py", "content": "x = 1\\n\\n', {"path": "a.py", "content": "x = 1\n\n"}),
        # Unquoted keys and single-quoted values.
        ("{path: 'a.py', content: 'it\\'s'}", {"path": "a.py", "content": "it's"}),
        # Trailing commas, and a comma inside a string that must stay.
        ('{"path": "a.py", "content": "a, b\\n",}', {"path": "a.py", "content": "a, b\n"}),
    ],
    ids=["truncated", "unquoted", "trailing-comma"],
)
async def test_streamed_tool_arguments_are_repaired(
    name: str, raw: str, expected: dict[str, str], fake: FakeLLMServer,
    make_provider: ProviderFactory,
) -> None:
    fake.add(Turn(faults=[Fault("malformed_tool_json", raw_args=raw)]))
    events = [e async for e in make_provider(name).stream(REQUEST)]
    (ended,) = [e for e in events if isinstance(e, ToolCallEnded)]
    assert ended.name == "Write"
    assert ended.input == expected
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert INVALID_TOOL_INPUT not in done.extra


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_unrepairable_streamed_arguments_are_reported_not_run(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(faults=[Fault("malformed_tool_json", raw_args="<<not json>>")]))
    events = [e async for e in make_provider(name).stream(REQUEST)]
    (ended,) = [e for e in events if isinstance(e, ToolCallEnded)]
    assert ended.input == {}
    done = events[-1]
    assert isinstance(done, StreamDone)
    (entry,) = done.extra[INVALID_TOOL_INPUT].values()
    assert entry["raw"] == "<<not json>>"
    assert entry["error"].startswith("not valid JSON")


async def test_gemini_malformed_function_call_is_retried(
    fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    fake.add(Turn(text="recovered", faults=[Fault("malformed_tool_json")]))
    events, _ = await run(make_provider("google"))
    (retrying,) = [e for e in events if isinstance(e, StreamRetrying)]
    assert isinstance(retrying.error, ServerError)
    assert "malformed function call" in str(retrying.error)
    assert isinstance(events[-1], StreamDone)


def test_gemini_retry_info_in_the_error_body_gives_the_delay() -> None:
    """Gemini's 429 says when to come back in a google.rpc.RetryInfo detail of the body
    (the SDK keeps the whole body as `APIError.details`); anything else gives no delay."""
    from aistack_tui.llm.google import _retry_delay

    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12.5s"}
    quota = {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []}
    body = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [quota, retry_info]}}
    assert _retry_delay(body) == 12.5
    assert _retry_delay(body["error"]) == 12.5, "a body without the error envelope"
    assert _retry_delay({"error": {"details": [{"retryDelay": "soon"}]}}) is None
    assert _retry_delay({"error": {"details": "12s"}}) is None
    assert _retry_delay(["not", "an", "object"]) is None
