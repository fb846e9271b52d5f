"""Storing what the workers return: parse results in groups, and a big build's second
pass (the references, signatures and docs the first pass left out).

A build of a pool's worth of files stores definitions, chunks and the full-text index
first: from then on search and each turn's code context cover every file. The
references feed only the repo map, and the definitions' signatures and docs are only
shown in it; reading them apart costs a second parse of each file, but takes the
reference query, its counting and its rows, and the signature and docstring derivation,
out of the time until the index is searchable.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

from aistack_tui.knowledge.pipeline import (
    POOL_THRESHOLD,
    ParseJob,
    ParseOutcome,
    run_jobs,
    run_references,
)
from aistack_tui.knowledge.store import FileState, IndexStore, ParsedFile
from aistack_tui.knowledge.types import IndexStats

Progress = Callable[[int, int], None]
WRITE_GROUP = 960
"""Files per write transaction in a big build (see `write_parsed`). On a 10,000-file
build, groups of 960 took the main process 0.25 CPU-s less than groups of 240 (fewer
full-text segments to flush, fewer transactions), and 1,920 no less than 960."""


async def write_parsed(
    store: IndexStore,
    root: str,
    jobs: Sequence[ParseJob],
    states: dict[str, FileState],
    stats: IndexStats,
    progress: Progress | None,
    *,
    embed_dim: int,
    references: bool,
    pool: Executor | None,
) -> None:
    """Parse `jobs` and write the results as they arrive (searchable group by group).

    A big build writes at least `WRITE_GROUP` files per transaction rather than one
    batch: each commit flushes a new FTS5 segment that later merges cost again, and a
    build's writes took a fifth less CPU (and half the wall time) in groups of 240 than
    per batch, and less again in groups of 960.
    The write runs in a task while results keep arriving: awaited in the loop, a long
    one would leave the workers without new batches (only a few per worker are in
    flight), and whatever arrives meanwhile goes into the next group. Once fewer files
    than a group are still being parsed, each write takes whatever has arrived: what is
    left when the last result comes is written while the workers have nothing to do, so
    it had better be small (a full group left then was a fifth of a second of one core
    busy and the other idle).
    """
    done = 0
    big = len(jobs) >= POOL_THRESHOLD
    waiting: list[ParseOutcome] = []
    writing: asyncio.Task[None] | None = None
    parsing = run_jobs(root, jobs, embed_dim=embed_dim, references=references, pool=pool)
    try:
        async for outcomes in parsing:
            waiting += outcomes
            done += len(outcomes)
            if progress:
                progress(done, len(jobs))
            group = WRITE_GROUP if big and len(jobs) - done > WRITE_GROUP else 1
            if len(waiting) < group or (writing is not None and not writing.done()):
                continue
            if writing is not None:
                await writing  # its error, if any, ends the refresh
            writing = asyncio.ensure_future(_write_outcomes(store, waiting, states, stats))
            waiting = []
        if writing is not None:
            await writing
        if waiting:
            await _write_outcomes(store, waiting, states, stats)
    finally:
        if writing is not None and not writing.done():
            writing.cancel()  # rolled back (see `immediate_transaction`)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writing


async def _write_outcomes(
    store: IndexStore,
    outcomes: Sequence[ParseOutcome],
    states: dict[str, FileState],
    stats: IndexStats,
) -> None:
    parsed: list[ParsedFile] = []
    vectors: list[tuple[bytes, ...]] = []
    touched: list[tuple[str, int, int]] = []
    for outcome in outcomes:
        if outcome.status in ("parsed", "ignored") and outcome.parsed is not None:
            parsed.append(outcome.parsed)
            vectors.append(outcome.vectors)
            if outcome.status == "ignored":
                stats.skipped += 1
                continue
            stats.parsed += 1
            stats.parsed_paths.append(outcome.job.path)
        elif outcome.status == "same":
            job = outcome.job
            touched.append((job.path, job.size, job.mtime_ns))
        else:
            stats.skipped += 1
    if parsed:
        await store.write(parsed, states, vectors)
        stats.chunks_embedded += sum(len(v) for v in vectors)
    if touched:
        await store.touch(touched)
        stats.touched += len(touched)


async def store_pending_references(
    store: IndexStore,
    root: str,
    pool: Executor | None,
    *,
    closed: Callable[[], bool],
    on_start: Callable[[], None],
) -> bool:
    """Read and store the references (and definition details) of every file stored
    without them; returns whether there were any. `on_start` is called before the first
    is read; the pass stops early once `closed()`.

    Each (file, content) is tried once: one edited since it was stored stays pending
    until the refresh that re-parses it. Files marked meanwhile (another refresh's big
    write) are picked up before returning.
    """
    tried: set[tuple[int, str]] = set()
    while not closed():
        pending = await store.pending_references()
        jobs = [job for job in pending if (job[0], job[3]) not in tried]
        if not jobs:
            break
        if not tried:
            on_start()
        tried.update((job[0], job[3]) for job in jobs)
        async for found in run_references(root, jobs, pool=pool):
            await store.store_references(found)
            if closed():
                break
    return bool(tried)
