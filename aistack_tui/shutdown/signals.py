"""Stop signals on a running event loop: the first one stops the work, a second one ends
the process at once.

SIGINT and SIGTERM (and SIGHUP where a terminal is involved) arrive while a turn streams
or a tool runs. The front end's `on_stop` interrupts the turn (the partial answer and
every completed message are kept) or cancels what it was waiting on; the exit deadline
is armed at the same moment, so closing the session cannot take longer than the budget.
A second signal is someone who will not wait: the children are killed and the process
exits with the first signal's status.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Sequence
from types import TracebackType

from aistack_tui.shutdown.deadline import arm_deadline, end_now, process_claimed
from aistack_tui.shutdown.status import signal_status

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)
STOP_BUDGET_S = 1.8
"""From the first signal to the process gone: the issue's promise is 2 s."""


class StopSignals:
    """While entered, the stop signals call `on_stop(signum)` on the loop (Unix only)."""

    def __init__(
        self,
        on_stop: Callable[[int], object],
        signals: Sequence[signal.Signals] = STOP_SIGNALS,
        *,
        budget: float = STOP_BUDGET_S,
    ) -> None:
        self.on_stop = on_stop
        self.signals = tuple(signals)
        self.budget = budget
        self.received: int | None = None
        self._installed: list[signal.Signals] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def status(self) -> int | None:
        """128 + the first signal's number, or None if none came."""
        return None if self.received is None else signal_status(self.received)

    def notice(self) -> str:
        """The one stderr line for the stop ("aistack: interrupted" for a Ctrl+C)."""
        if self.received is None or self.received == signal.SIGINT:
            return "aistack: interrupted"
        return f"aistack: stopped by {_name(self.received)}"

    def _handle(self, signum: int) -> None:
        if self.received is not None:
            if process_claimed():
                end_now(signal_status(self.received))
            return  # in-process (a test): the first stop is still under way
        self.received = signum
        arm_deadline(self.budget, signal_status(signum), f"stopping on {_name(signum)}")
        self.on_stop(signum)

    def __enter__(self) -> StopSignals:
        loop = asyncio.get_running_loop()
        self._loop = loop
        for sig in self.signals:
            try:
                loop.add_signal_handler(sig, self._handle, int(sig))
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # not the main thread, or not Unix: the default behaviour stays
            self._installed.append(sig)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        loop, self._loop = self._loop, None
        for sig in self._installed:
            if loop is not None and not loop.is_closed():
                loop.remove_signal_handler(sig)
        self._installed.clear()


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
