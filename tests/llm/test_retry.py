"""Backoff grows exponentially with jitter, honours retry-after, and stays capped."""

from __future__ import annotations

import pytest

from aistack_tui.llm.retry import RetryPolicy


def test_backoff_doubles_until_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=30.0, jitter=0.0)
    assert [policy.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_jitter_spreads_delays_within_bounds() -> None:
    policy = RetryPolicy(base_delay=4.0, jitter=0.2)
    assert policy.delay(1, rand=lambda: 0.0) == pytest.approx(3.2)
    assert policy.delay(1, rand=lambda: 1.0) == pytest.approx(4.8)
    assert policy.delay(1, rand=lambda: 0.5) == pytest.approx(4.0)


def test_retry_after_is_a_floor_capped_at_max_delay() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=30.0, jitter=0.0)
    assert policy.delay(1, retry_after=7.5) == 7.5
    assert policy.delay(5, retry_after=2.0) == 16.0, "backoff longer than retry-after wins"
    assert policy.delay(1, retry_after=3600) == 30.0


def test_defaults_match_the_contract() -> None:
    assert RetryPolicy() == RetryPolicy(max_retries=5, base_delay=1.0, max_delay=30.0,
                                        jitter=0.2)
