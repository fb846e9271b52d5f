"""Keeps a `VectorMatrix`'s approximate first pass built, one build at a time.

Training the product quantiser takes seconds at 100k rows, so it runs on a disposable
thread (`storage/disposable_thread.py`) while searches stay exact; the memory store and
the code index both own one of these next to their matrix.
"""

from __future__ import annotations

import asyncio
import logging

from aistack_tui.storage.disposable_thread import run_disposable
from aistack_tui.storage.vector_matrix import FirstPassBuild, VectorMatrix

log = logging.getLogger(__name__)


class FirstPassBuilder:
    def __init__(self, owner: str) -> None:
        self.owner = owner
        """Who the matrix belongs to, for the thread's name and the warning."""
        self._task: asyncio.Task[None] | None = None

    def refresh(self, matrix: VectorMatrix) -> None:
        """Start building `matrix`'s first pass if it wants one and no build is running.

        Only long-lived owners call this: a one-shot command searches a few times, and
        the exact product (~13 ms at 100k rows) is far cheaper than a build (2-3 s)."""
        due = matrix.first_pass_due()
        if due is None or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.get_running_loop().create_task(
            self._build(matrix, due), name=f"{self.owner}-first-pass"
        )

    async def _build(self, matrix: VectorMatrix, build: FirstPassBuild) -> None:
        try:
            built = await run_disposable(build.run, f"{self.owner}-first-pass")
        except Exception as e:  # faiss refused (out of memory, say): stay exact, quietly
            log.warning("%s: no approximate vector search, exact instead: %s", self.owner, e)
            matrix.approximate = False
            return
        matrix.install_first_pass(build, built)

    async def wait(self) -> None:
        """Until a running build is done (tests and benchmarks)."""
        if self._task is not None:
            await asyncio.wait({self._task})

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})
