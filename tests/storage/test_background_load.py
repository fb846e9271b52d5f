"""The shared background-load lifecycle of the vector matrices: one load at a time,
waited for, stopped on close, and a failed load reported rather than lost."""

from __future__ import annotations

import asyncio
import logging

import pytest

from aistack_tui.storage.background_load import BackgroundLoad


async def test_one_load_at_a_time_and_wait_until_done() -> None:
    loads = BackgroundLoad("memory")
    release = asyncio.Event()
    runs: list[int] = []

    async def load() -> None:
        runs.append(len(runs))
        await release.wait()

    assert loads.start(load)
    assert loads.running
    assert not loads.start(load)  # a load is running: not a second one
    await asyncio.sleep(0)
    release.set()
    await loads.wait()
    assert not loads.running
    assert runs == [0]
    assert loads.start(load)  # done: a reload may start
    await loads.wait()
    assert runs == [0, 1]


async def test_stop_cancels_a_hanging_load() -> None:
    loads = BackgroundLoad("code index")
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def load() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    loads.start(load)
    await started.wait()
    await asyncio.wait_for(loads.stop(), 5)
    assert cancelled.is_set()
    assert not loads.running
    await loads.stop()  # twice is harmless
    await loads.wait()  # and waiting after a stop returns at once


async def test_a_failed_load_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    loads = BackgroundLoad("memory")

    async def load() -> None:
        raise MemoryError("no room for 100k rows")

    with caplog.at_level(logging.WARNING, logger="aistack_tui.storage.background_load"):
        loads.start(load)
        await loads.wait()
        await asyncio.sleep(0)  # done callbacks run on the next loop pass
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ["memory: could not load the vectors into memory: no room for 100k rows"]
    assert not loads.running
