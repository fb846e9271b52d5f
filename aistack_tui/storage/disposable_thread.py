"""CPU-heavy work whose result dies with the process, on a thread exit does not wait for.

`asyncio.to_thread` runs on the loop's default executor, and `asyncio.run` joins every
thread of it before returning: a one-shot `aistack -p` that finishes while a large vector
matrix is loading, or while its first pass is training, would linger for seconds over a
result nobody will read (measured: 2.5 s at 100k memories). A daemon thread is abandoned
at interpreter exit instead. Only for work that writes no file and holds no lock.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def run_disposable(fn: Callable[[], T], name: str = "disposable-work") -> T:
    """`fn()` on a daemon thread; cancelling the await abandons the result, not the work."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as error:  # handed to the awaiting task
            future.set_exception(error)

    threading.Thread(target=work, name=name, daemon=True).start()
    return await asyncio.wrap_future(future)
