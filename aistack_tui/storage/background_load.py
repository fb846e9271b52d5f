"""The lifecycle of an in-process vector matrix that loads in the background.

The memory store (`memory/vectors.py`) and the code index (`knowledge/vector_cache.py`)
each keep a `VectorMatrix` that is read from SQLite while searches are answered by `vec0`,
then gets an approximate first pass built on a thread. Both need the same four moves:
start a load unless one is running, tell whether one is running, wait for the load and
the first pass it started (tests, benchmarks), and stop both when the store closes. What
a load reads, and when one is wanted, stays with each owner.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from aistack_tui.storage.first_pass_builder import FirstPassBuilder

log = logging.getLogger(__name__)


class BackgroundLoad:
    """One background load at a time, plus the first-pass builder that follows it."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        """Who the matrix belongs to ("memory", "code index"), for task names and logs."""
        self.first_pass = FirstPassBuilder(owner)
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self, load: Callable[[], Coroutine[Any, Any, None]]) -> bool:
        """Run `load()` as a task unless a load is running; whether one was started."""
        if self.running:
            return False
        task = asyncio.get_running_loop().create_task(
            load(), name=f"{self.owner}-vector-matrix".replace(" ", "-")
        )
        task.add_done_callback(self._report)
        self._task = task
        return True

    def _report(self, task: asyncio.Task[None]) -> None:
        # A failed load leaves the owner on `vec0`; say why once instead of leaving an
        # exception nobody retrieves.
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("%s: could not load the vectors into memory: %s", self.owner, error)

    async def wait(self) -> None:
        """Until the running load, and the first pass it started, are done."""
        if self._task is not None:
            await asyncio.wait({self._task})
        await self.first_pass.wait()

    async def stop(self) -> None:
        """Cancel the load and the first-pass build, and wait until both have ended."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})
        await self.first_pass.stop()
