"""Stop conditions: hard limits on tokens, cost and wall time, and a soft limit on
consecutive tool failures. A reached limit is an exception with a payload that the turn
loop turns into a final `TurnEnded(reason=..., detail=...)`."""

from __future__ import annotations

import time
from dataclasses import dataclass

from aistack_tui.llm.types import Usage


@dataclass(frozen=True, slots=True)
class RunLimits:
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_seconds: float | None = None
    max_consecutive_tool_failures: int | None = None


class LimitReachedError(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def check_hard_limits(
    limits: RunLimits, *, usage: Usage, cost_usd: float | None, started: float
) -> None:
    """Raise LimitReachedError when this run has used up a hard budget."""
    tokens = (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_input_tokens
        + usage.cache_creation_input_tokens
    )
    if limits.max_tokens is not None and tokens >= limits.max_tokens:
        raise LimitReachedError(
            "budget", f"Stopped: the token limit of {limits.max_tokens:,} was reached "
            f"({tokens:,} tokens used)."
        )
    if limits.max_cost_usd is not None and cost_usd is not None and cost_usd >= limits.max_cost_usd:
        raise LimitReachedError(
            "budget", f"Stopped: the cost limit of ${limits.max_cost_usd:.2f} was reached "
            f"(${cost_usd:.4f} spent)."
        )
    elapsed = time.monotonic() - started
    if limits.max_wall_seconds is not None and elapsed >= limits.max_wall_seconds:
        raise LimitReachedError(
            "budget", f"Stopped: the time limit of {limits.max_wall_seconds:g}s was reached."
        )


def check_tool_failures(limits: RunLimits, consecutive_failures: int) -> None:
    limit = limits.max_consecutive_tool_failures
    if limit is not None and consecutive_failures >= limit:
        raise LimitReachedError(
            "tool_failures",
            f"Stopped: {consecutive_failures} tool calls failed in a row.",
        )
