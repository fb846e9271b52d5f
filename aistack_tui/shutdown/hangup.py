"""SIGHUP for a front end whose event loop someone else runs (Textual's).

When the terminal closes, the kernel sends SIGHUP; by default that kills the process
with nothing closed: the turn's partial answer lost, a running command and the MCP
servers orphaned. `on_hangup` turns it into a call on the running loop, so the front end
quits the way its own quit does; the exit deadline makes sure that takes 2 s at most,
and a second SIGHUP ends the process at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType

from aistack_tui.shutdown.deadline import arm_deadline, end_now, process_claimed
from aistack_tui.shutdown.signals import STOP_BUDGET_S
from aistack_tui.shutdown.status import EXIT_HANGUP


@contextlib.contextmanager
def on_hangup(quit_front_end: Callable[[], object]) -> Iterator[None]:
    """While entered, SIGHUP calls `quit_front_end` on the loop running at that moment."""
    received = False

    def handle(_signum: int, _frame: FrameType | None) -> None:
        nonlocal received
        if received:
            if process_claimed():
                end_now(EXIT_HANGUP)
            return
        received = True
        arm_deadline(STOP_BUDGET_S, EXIT_HANGUP, "stopping on SIGHUP")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # between loops: nothing is running to stop
            raise SystemExit(EXIT_HANGUP) from None
        loop.call_soon_threadsafe(quit_front_end)

    try:
        previous = signal.signal(signal.SIGHUP, handle)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)
