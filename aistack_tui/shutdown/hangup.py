"""SIGHUP and SIGTERM for a front end whose event loop someone else runs (Textual's).

When the terminal closes, the kernel sends SIGHUP; by default that, like SIGTERM, kills
the process with nothing closed: the turn's partial answer lost, a running command and
the MCP servers orphaned. `on_end_signals` turns each into a call on the running loop
with the status to exit with (129, 143), so the front end quits the way its own quit
does; the exit deadline makes sure that takes 2 s at most, and a second signal ends the
process at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any

from aistack_tui.shutdown.deadline import arm_deadline, end_now, process_claimed
from aistack_tui.shutdown.signals import STOP_BUDGET_S
from aistack_tui.shutdown.status import signal_status

END_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGHUP, signal.SIGTERM)


@contextlib.contextmanager
def on_end_signals(
    quit_front_end: Callable[[int], object], signals: Sequence[signal.Signals] = END_SIGNALS
) -> Iterator[None]:
    """While entered, each of `signals` calls `quit_front_end(status)` on the loop running
    at that moment."""
    first: list[int] = []

    def handle(signum: int, _frame: FrameType | None) -> None:
        if first:
            if process_claimed():
                end_now(signal_status(first[0]))
            return
        first.append(signum)
        status = signal_status(signum)
        arm_deadline(STOP_BUDGET_S, status, f"stopping on {signal.Signals(signum).name}")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # between loops: nothing is running to stop
            raise SystemExit(status) from None
        loop.call_soon_threadsafe(quit_front_end, status)

    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: the defaults stay
        for sig in signals:
            previous[sig] = signal.signal(sig, handle)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
