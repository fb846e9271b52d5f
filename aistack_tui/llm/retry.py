"""Retries with exponential backoff and jitter, for every provider alike.

The SDKs' own retries are switched off (`max_retries=0`) because they cannot retry a
stream that fails half-way, do not exist at all in google-genai, and would hide the wait
from the user. Here a failed attempt becomes a visible `StreamRetrying` event and the
request starts again from the beginning.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.provider import Provider
from aistack_tui.llm.types import LLMRequest, StreamDone, StreamEvent, StreamRetrying

BackoffStrategy = Literal["fixed", "linear", "exponential", "fibonacci"]
BACKOFF_STRATEGIES: tuple[str, ...] = ("fixed", "linear", "exponential", "fibonacci")


def backoff_factor(strategy: str, attempt: int) -> float:
    """Multiplier of the base delay for retry `attempt` (1-based)."""
    if strategy == "fixed":
        return 1.0
    if strategy == "linear":
        return float(attempt)
    if strategy == "fibonacci":
        a, b = 1, 1
        for _ in range(attempt - 1):
            a, b = b, a + b
        return float(a)
    return float(2 ** (attempt - 1))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a retryable `ProviderError`."""

    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.2
    """Relative spread: 0.2 turns a 4 s delay into anything from 3.2 s to 4.8 s, so
    clients that failed together do not all come back at the same instant."""
    strategy: BackoffStrategy = "exponential"
    per_error: Mapping[str, BackoffStrategy] = field(default_factory=dict[str, BackoffStrategy])
    """Strategy by error class name (`RateLimitError`, `OverloadedError`, `ServerError`,
    `ProviderConnectionError`, `ProviderTimeoutError`), overriding `strategy`."""

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        rand: Callable[[], float] = random.random,
        error_kind: str | None = None,
    ) -> float:
        """Seconds to wait before retry number `attempt` (1-based).

        Backoff by the strategy for this error class, with jitter, but never shorter
        than the server's `retry-after` (itself capped at `max_delay`, so a server
        asking for an hour does not freeze the session).
        """
        strategy = self.per_error.get(error_kind or "", self.strategy)
        backoff = min(self.max_delay, self.base_delay * backoff_factor(strategy, attempt))
        backoff *= 1.0 + self.jitter * (2.0 * rand() - 1.0)
        if retry_after is not None:
            backoff = max(backoff, min(retry_after, self.max_delay))
        return max(0.0, min(backoff, self.max_delay))


async def stream_with_retry(
    provider: Provider,
    request: LLMRequest,
    policy: RetryPolicy | None = None,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncIterator[StreamEvent]:
    """Stream `request`, retrying retryable errors from the start of the request.

    A retryable `ProviderError` raised before or during the stream yields
    `StreamRetrying(error, attempt, delay)`, waits, and starts the request again; every
    event yielded before a `StreamRetrying` belongs to a discarded attempt. Consumers
    therefore render deltas as they come but *act* only on `StreamDone`: the tool calls
    and the message to persist are the ones in `StreamDone.message`, which is yielded
    exactly once, by the attempt that succeeded. (A `ToolCallEnded` seen before a
    `StreamRetrying` will be seen again, perhaps differently, in the next attempt.)

    Non-retryable errors, and the last error once `policy.max_retries` retries are
    spent, are raised.
    """
    policy = policy or RetryPolicy()
    attempt = 0
    while True:
        done = False
        events = provider.stream(request)
        try:
            async for event in events:
                if isinstance(event, StreamDone):
                    done = True
                yield event
            return
        except ProviderError as error:
            if done:
                # The message is complete; a failure while closing the stream must not
                # replay a turn the consumer has already acted on.
                return
            if not error.retryable or attempt >= policy.max_retries:
                raise
            attempt += 1
            wait = policy.delay(attempt, error.retry_after, error_kind=type(error).__name__)
            yield StreamRetrying(error=error, attempt=attempt, delay=wait)
            await sleep(wait)
        finally:
            # Close the attempt's stream (and its connection) now, also when the
            # consumer stops early, instead of leaving it to the garbage collector.
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
