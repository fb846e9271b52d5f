"""Per-error-class backoff strategies of the recovery policy."""

from __future__ import annotations

import pytest

from aistack_tui.llm.retry import RetryPolicy, backoff_factor


@pytest.mark.parametrize(("strategy", "factors"), [
    ("fixed", [1, 1, 1, 1, 1]),
    ("linear", [1, 2, 3, 4, 5]),
    ("exponential", [1, 2, 4, 8, 16]),
    ("fibonacci", [1, 1, 2, 3, 5]),
])
def test_backoff_factors(strategy: str, factors: list[int]) -> None:
    assert [backoff_factor(strategy, n) for n in range(1, 6)] == factors


def test_strategy_chosen_by_error_class_and_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0, jitter=0.0,
                         per_error={"RateLimitError": "fixed"})
    assert policy.delay(4, error_kind="RateLimitError") == 1.0
    assert policy.delay(4, error_kind="ServerError") == 8.0
    assert policy.delay(9, error_kind="ServerError") == 10.0
    assert policy.delay(1, retry_after=3.0, error_kind="RateLimitError") == 3.0
