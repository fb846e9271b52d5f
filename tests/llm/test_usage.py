"""Usage arithmetic: totals add up, and a turn's share is the total minus a snapshot."""

from __future__ import annotations

from aistack_tui.llm.types import Usage


def test_usage_since_a_snapshot_is_the_difference_of_every_counter() -> None:
    before = Usage(input_tokens=100, output_tokens=20, cache_read_input_tokens=50,
                   cache_creation_input_tokens=7)
    step = Usage(input_tokens=30, output_tokens=5, cache_read_input_tokens=400,
                 cache_creation_input_tokens=1)
    after = before + step
    assert after == Usage(input_tokens=130, output_tokens=25, cache_read_input_tokens=450,
                          cache_creation_input_tokens=8)
    assert after - before == step
    assert after - after == Usage()
    assert before - Usage() == before
