"""FakeClock: a monotonic clock that moves only when a test moves it.

Replaces `time.monotonic` where code judges how much time passed between two user
actions (the dialogs' typing guard), so tests are exact and never sleep.
"""

from __future__ import annotations


class FakeClock:
    """Call it for the time; `advance(seconds)` moves it on."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
