"""The exit deadline: once aistack has decided to end, the process is gone in bounded time.

Closing a session waits on things outside our control (an MCP server that ignores
SIGTERM, a database thread, a provider socket); a non-daemon thread left running keeps
the interpreter alive in `threading._shutdown` forever. A daemon thread armed when the
end begins ends the leftover child processes halfway to the deadline and, if the process
is still there at the deadline, says so on stderr and exits at once.

Only the console script claims the process (`claim_process`): a program or test calling
aistack in-process keeps its own children and its own exit.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import NoReturn

from aistack_tui.shutdown.children import end_children

_claimed = threading.Event()


def claim_process() -> None:
    """This process is aistack's to end: the console script calls this first."""
    _claimed.set()


def process_claimed() -> bool:
    return _claimed.is_set()


def arm_deadline(seconds: float, status: int, what: str) -> None:
    """End the process with `status` if it is still there in `seconds`; `what` names what
    was going on (for the stderr line). Does nothing unless the process is claimed."""
    if not process_claimed():
        return
    thread = threading.Thread(
        target=_watch, args=(seconds, status, what), name="aistack-exit-deadline",
        daemon=True,
    )
    thread.start()


EXIT_BUDGET_S = 2.0
"""From `main` returning to the process gone."""


def after_main(status: int) -> None:
    """`main` is done: end the children no one stopped, then give the interpreter's own
    shutdown (joining threads, flushing) `EXIT_BUDGET_S` before the deadline ends it."""
    if not process_claimed():
        return
    with contextlib.suppress(OSError):
        end_children(grace=0.5)
    arm_deadline(EXIT_BUDGET_S, status, "exit")


def end_now(status: int) -> NoReturn:
    """A second signal: end the children and the process without waiting for anything."""
    with contextlib.suppress(OSError):
        end_children(grace=0)
    os._exit(status)


def _watch(seconds: float, status: int, what: str) -> None:
    time.sleep(seconds / 2)
    with contextlib.suppress(OSError):
        end_children(grace=seconds / 4)
    time.sleep(max(0.0, seconds / 4))
    waiting = sorted(t.name for t in threading.enumerate() if not t.daemon and t.is_alive()
                     and t is not threading.main_thread())
    held = f"; still running: {', '.join(waiting)}" if waiting else ""
    line = f"aistack: {what} did not finish within {seconds:g} s{held}; exiting now\n"
    with contextlib.suppress(OSError):
        os.write(2, line.encode())  # unbuffered: a stuck sys.stderr lock cannot block it
    os._exit(status)
