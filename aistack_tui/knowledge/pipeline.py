"""Read, hash, parse and (optionally) embed changed files, in parallel across cores.

Tree-sitter parsing and the offline embedder are CPU-bound Python work, so big batches
go to a process pool (one worker per core, batches of `BATCH` files) and small ones run in
a thread, which avoids the pool's start-up cost for the common one-file update. Workers
receive paths, not contents, and return results per batch so the caller can write and
report progress while the rest is still parsing.

A big build runs in two passes: `parse_batch` without the reference patterns and
without the definitions' signatures and docs (what search needs: definitions, chunks),
then `reference_batch` for the references the repo map is ranked from and the details
it shows, once the index is searchable (see `writer.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import multiprocessing
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from aistack_tui.knowledge.extract import extract, extract_second_pass
from aistack_tui.knowledge.skip_rules import SKIPPED_LANGUAGE, skip_reason
from aistack_tui.knowledge.store import ParsedFile, embed_text
from aistack_tui.knowledge.types import DefinitionRow, FileExtraction, definition_rows
from aistack_tui.knowledge.walker import (
    WalkEntry,
    never_indexed,
    relative_inside,
    resolved_inside,
    walk,
)

BATCH = 96
"""Files per worker task: each task costs the main process a round of pickling, futures
and wake-ups, and 96 files a task took a twentieth off its CPU in a build against 48."""
EMBED_BATCH = 256
EMBED_POOL_THRESHOLD = 1000
IN_FLIGHT_PER_WORKER = 3
POOL_THRESHOLD = 200
"""Fewer changed files than this are parsed in a thread: a pool costs ~100 ms to start."""
_BINARY_SNIFF = 8192
_O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class ParseJob:
    path: str
    language: str
    size: int
    mtime_ns: int
    known_hash: str

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as plain tuples (also `ParseOutcome`): several times faster than the
        # default reduction of a slotted dataclass, paid per file in both directions.
        return (ParseJob, (self.path, self.language, self.size, self.mtime_ns, self.known_hash))


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    """`status` is `parsed` (new content), `same` (hash unchanged), `ignored` (generated
    or minified: recorded without chunks, see `skip_rules`) or `skipped` (unreadable,
    binary, or no longer inside the project: not recorded)."""

    status: str
    job: ParseJob
    parsed: ParsedFile | None = None
    vectors: tuple[bytes, ...] = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return (ParseOutcome, (self.status, self.job, self.parsed, self.vectors))


@cache
def _worker_embedder(dim: int) -> object:
    from aistack_tui.storage.hashing_embedder import HashingEmbedder

    return HashingEmbedder(dim)


def _embed_chunks(path: str, extraction: FileExtraction, dim: int) -> tuple[bytes, ...]:
    from aistack_tui.storage.hashing_embedder import HashingEmbedder, serialize_f32

    embedder = _worker_embedder(dim)
    assert isinstance(embedder, HashingEmbedder)
    texts = [embed_text(path, c.symbol, c.text) for c in extraction.chunks]
    return tuple(serialize_f32(v) for v in embedder.embed_sync(texts))


def _read_inside(root: str, path: str, real_root: str) -> bytes | None:
    """A text file's bytes, or None when it is unreadable, binary or not ours to read.

    Checked again here, where the file is read: a file swapped after the walk for a
    symlink out of the project (or into .git/, a secrets file...), or for a FIFO or a
    device, is not read. The check is made on the file as opened, not on its name
    beforehand, so a swap between the check and the read changes nothing. `real_root`
    is `os.path.realpath(root)`, resolved once per batch.
    """
    try:
        # Non-blocking: opening a FIFO for reading would otherwise wait for a writer.
        fd = os.open(os.path.join(root, path), os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return None
        target = _opened_inside(fd, root, path, real_root)
        if target is None or never_indexed(target) or (
                target != path and never_indexed(path)):
            return None
        data = _read_all(fd, status.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if b"\x00" in data[:_BINARY_SNIFF] else data


def _read_all(fd: int, size: int) -> bytes:
    """The rest of a regular file: usually one read of the size `fstat` gave (a buffered
    file object around it cost more than the read itself, over a tree's files)."""
    data = os.read(fd, size + 1)
    if len(data) <= size:  # a short read of a regular file is its end
        return data
    parts = [data]
    while part := os.read(fd, max(size, 1 << 16)):  # it grew meanwhile
        parts.append(part)
    return b"".join(parts)


def _opened_inside(fd: int, root: str, path: str, real_root: str) -> str | None:
    """The project-relative real path of the file open as `fd`, or None when it is
    outside the project (or was deleted meanwhile).

    Linux names an open file in `/proc/self/fd`, so the path checked is the file's
    that is read; resolving the name again could meet another file swapped in
    meanwhile. Without `/proc` (macOS), the name is resolved, as the best available.
    """
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return resolved_inside(root, path, real_root)
    return None if real.endswith(" (deleted)") else relative_inside(real_root, real)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def parse_batch(
    root: str, jobs: Sequence[ParseJob], embed_dim: int, references: bool = True
) -> list[ParseOutcome]:
    """Worker entry point (must stay a top-level function so a pool can pickle it).

    With `references=False` the files' references are left for `reference_batch`.
    """
    out: list[ParseOutcome] = []
    real_root = os.path.realpath(root)
    for job in jobs:
        data = _read_inside(root, job.path, real_root)
        if data is None:
            out.append(ParseOutcome("skipped", job))
            continue
        digest = _digest(data)
        if digest == job.known_hash:
            out.append(ParseOutcome("same", job))
            continue
        if skip_reason(data) is not None:
            nothing = FileExtraction(SKIPPED_LANGUAGE, (), (), (), data.count(b"\n"))
            parsed = ParsedFile(job.path, len(data), job.mtime_ns, digest, nothing)
            out.append(ParseOutcome("ignored", job, parsed))
            continue
        try:
            extraction = extract(data, job.language, references=references)
        except (ValueError, RecursionError):
            extraction = extract(data, "text")
        parsed = ParsedFile(job.path, len(data), job.mtime_ns, digest, extraction)
        vectors = _embed_chunks(job.path, extraction, embed_dim) if embed_dim else ()
        out.append(ParseOutcome("parsed", job, parsed, vectors))
    return out


ReferenceJob = tuple[int, str, str, str]
"""(file id, path, language, content hash) of a file stored without its references."""
References = tuple[tuple[str, int], ...]
SecondPass = tuple[int, str, References, tuple[DefinitionRow, ...]]
"""(file id, content hash, references, definitions with their signatures and docs)."""


def reference_batch(root: str, jobs: Sequence[ReferenceJob]) -> list[SecondPass]:
    """Worker entry point: what the first pass of a big build left out of these files
    (`extract_second_pass`). A file whose content no longer has the stored hash is left
    out: the next refresh re-parses it whole."""
    out: list[SecondPass] = []
    real_root = os.path.realpath(root)
    for file_id, path, language, known_hash in jobs:
        data = _read_inside(root, path, real_root)
        if data is None or _digest(data) != known_hash:
            continue
        try:
            references, definitions = extract_second_pass(data, language)
        except (ValueError, RecursionError):
            references, definitions = (), ()  # `parse_batch` indexed this file as plain text
        out.append((file_id, known_hash, references, definition_rows(definitions)))
    return out


WORKER_NICENESS = 5
"""Indexing is background work: its workers yield the CPU to the session's own process
(the turn being sent, the TUI drawing), which otherwise shares two cores with them."""


def lower_priority() -> None:
    """Pool initializer: run this worker at `WORKER_NICENESS` (best effort)."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WORKER_NICENESS)


def _warm(_: int) -> None:
    """Nothing: submitted once per worker so the pool's processes exist."""


def _tracker_started() -> None:
    """Start multiprocessing's resource tracker with a real stderr.

    The tracker's process is started with the fd of `sys.stderr`, at the first pool.
    Under the TUI that is Textual's print capture, whose `fileno()` is -1, and starting
    the tracker raised `ValueError: bad value(s) in fds_to_keep`: no pool ever started
    there, and a big project got no code index at all. So when `sys.stderr` has no file
    descriptor, the tracker is started with the process's own stderr (for the moment
    the tracker takes to start; nothing else writes to stderr under the TUI)."""
    from multiprocessing import resource_tracker

    try:
        usable = sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = True  # the tracker leaves out a stderr without a descriptor by itself
    if usable or sys.__stderr__ is None:
        return
    captured, sys.stderr = sys.stderr, sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = captured


def _new_pool(workers: int) -> Executor:
    # forkserver: the event loop's threads (aiosqlite, the TUI) make plain fork unsafe.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    _tracker_started()
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context(method), initializer=lower_priority
    )
    # Starting the processes blocks until the fork server answers (100-200 ms while
    # the server itself starts): done here, in a thread, not on the event loop.
    list(pool.map(_warm, range(workers)))
    return pool


async def _pool(workers: int) -> Executor | None:
    """A started pool, or None when processes cannot start here (callers use a thread)."""
    task = asyncio.ensure_future(asyncio.to_thread(_new_pool, workers))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.add_done_callback(_shut_down_late)  # the thread finishes starting it
        raise
    except (BrokenProcessPool, OSError, ValueError):
        return None


def _shut_down_late(task: asyncio.Future[Executor]) -> None:
    if not task.cancelled() and task.exception() is None:
        task.result().shutdown(wait=False, cancel_futures=True)


async def _map_batches(
    fn: Callable[..., R],
    batches: Sequence[tuple[Any, ...]],
    use_pool: bool,
    workers: int,
    shared: Executor | None = None,
) -> AsyncIterator[R]:
    """`fn(*batch)` for every batch, in a process pool or a thread, in completion order.

    `shared` is a started pool the caller owns (and shuts down); otherwise one is
    started for these batches."""
    if not use_pool:
        for batch in batches:
            yield await asyncio.to_thread(fn, *batch)
        return
    loop = asyncio.get_running_loop()
    pool = shared or await _pool(min(workers, len(batches)))
    if pool is None:
        for batch in batches:
            yield await asyncio.to_thread(fn, *batch)
        return
    remaining = dict(enumerate(batches))
    queued = iter(list(remaining.items()))
    futures: dict[asyncio.Future[R], int] = {}

    def submit_next() -> None:
        item = next(queued, None)
        if item is not None:
            future = loop.run_in_executor(pool, fn, *item[1])
            # After a failure the other futures fail too; nobody awaits them, so mark
            # their exceptions as seen instead of logging "never retrieved" for each.
            future.add_done_callback(_silence)
            futures[future] = item[0]

    try:
        # A few batches per worker in flight, not all: pickling every job up front would
        # hold the GIL (and the event loop) for tens of milliseconds on a big tree.
        for _ in range(IN_FLIGHT_PER_WORKER * workers):
            submit_next()
        while futures:
            done, _ = await asyncio.wait(set(futures), return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                result = future.result()
                del remaining[futures.pop(future)]
                submit_next()
                yield result
    except BrokenProcessPool:
        # A worker could not start or died (e.g. the main module cannot be re-imported):
        # finish in a thread rather than fail the refresh.
        for batch in list(remaining.values()):
            yield await asyncio.to_thread(fn, *batch)
    finally:
        if shared is None:
            pool.shutdown(wait=False, cancel_futures=True)
        else:
            for future in futures:
                future.cancel()


def walk_rows(root: str, part: int = 0, parts: int = 1) -> list[tuple[str, int, int, str]]:
    """Worker entry point: the walk (its share `part` of `parts`, see `walk`), as plain
    tuples (they unpickle several times faster than dataclasses, and the unpickling holds
    the main process's GIL)."""
    from pathlib import Path

    return [(e.path, e.size, e.mtime_ns, e.language) for e in walk(Path(root), part, parts)]


async def walk_in_worker(
    root: str, pool: Executor, workers: int | None = None
) -> list[WalkEntry] | None:
    """Walk the tree in the worker processes of `pool` (one share each, see `walk`), or
    None when it cannot.

    For a first build, whose walk of a 20,000-file tree is a second of Python: in a
    thread it would take the GIL from the event loop half of that time, and the turn the
    user just sent would go out late. The pool is the one the build then parses in, so
    a first build starts one pool, not two. Nothing is parsed until the walk is done,
    so one worker walking alone left the others idle meanwhile.
    """
    parts = _cores(workers)
    try:
        shares = await asyncio.gather(
            *(asyncio.wrap_future(pool.submit(walk_rows, root, part, parts))
              for part in range(parts))
        )  # fmt: skip
    except BrokenProcessPool:
        return None
    return [WalkEntry(*row) for rows in shares for row in rows]


async def build_pool(workers: int | None = None) -> Executor | None:
    """A started pool of one process per core for a whole big build (its walk, parse
    and reference passes), or None when processes cannot start here. The caller shuts
    it down."""
    return await _pool(_cores(workers))


def _silence(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _cores(workers: int | None) -> int:
    return workers or os.cpu_count() or 1


async def run_jobs(
    root: str,
    jobs: Sequence[ParseJob],
    *,
    embed_dim: int = 0,
    references: bool = True,
    workers: int | None = None,
    pool: Executor | None = None,
) -> AsyncIterator[list[ParseOutcome]]:
    """Parse (and, with `embed_dim`, embed) files; yield outcomes batch by batch (in
    `pool`, when given and the batch is big enough for one)."""
    batches = [
        (root, list(jobs[i : i + BATCH]), embed_dim, references)
        for i in range(0, len(jobs), BATCH)
    ]
    use_pool = len(jobs) >= POOL_THRESHOLD and _cores(workers) > 1
    async for outcomes in _map_batches(parse_batch, batches, use_pool, _cores(workers), pool):
        yield outcomes


async def run_references(
    root: str,
    jobs: Sequence[ReferenceJob],
    *,
    workers: int | None = None,
    pool: Executor | None = None,
) -> AsyncIterator[list[SecondPass]]:
    """The second pass: references and definition details of files stored without
    them, batch by batch."""
    batches = [(root, list(jobs[i : i + BATCH])) for i in range(0, len(jobs), BATCH)]
    use_pool = len(jobs) >= POOL_THRESHOLD and _cores(workers) > 1
    async for found in _map_batches(reference_batch, batches, use_pool, _cores(workers), pool):
        yield found


def embed_batch(dim: int, rows: list[tuple[int, str]]) -> list[tuple[int, bytes]]:
    """Worker entry point: offline-embed chunk texts, returning (chunk id, float32 blob)."""
    from aistack_tui.storage.hashing_embedder import HashingEmbedder, serialize_f32

    embedder = _worker_embedder(dim)
    assert isinstance(embedder, HashingEmbedder)
    vectors = embedder.embed_sync([text for _, text in rows])
    return [(cid, serialize_f32(v)) for (cid, _), v in zip(rows, vectors, strict=True)]


async def run_embeddings(
    dim: int,
    pages: AsyncIterator[list[tuple[int, str]]],
    *,
    use_pool: bool,
    workers: int | None = None,
) -> AsyncIterator[list[tuple[int, bytes]]]:
    """Embed pages of pending chunks with the offline embedder.

    One pool serves the whole run (each worker's token cache stays warm), and the next
    page is fetched while earlier batches are still being embedded.
    """
    cores = _cores(workers)
    if not use_pool or cores < 2:
        async for page in pages:
            for start in range(0, len(page), EMBED_BATCH):
                yield await asyncio.to_thread(embed_batch, dim, page[start : start + EMBED_BATCH])
        return
    loop = asyncio.get_running_loop()
    started = await _pool(cores)
    if started is None:
        async for page in pages:
            for start in range(0, len(page), EMBED_BATCH):
                yield await asyncio.to_thread(embed_batch, dim, page[start : start + EMBED_BATCH])
        return
    pool = started
    inflight: dict[asyncio.Future[list[tuple[int, bytes]]], list[tuple[int, str]]] = {}
    exhausted = False
    try:
        while True:
            while not exhausted and len(inflight) < 4 * cores:
                page = await anext(pages, None)
                if page is None:
                    exhausted = True
                    break
                for start in range(0, len(page), EMBED_BATCH):
                    batch = page[start : start + EMBED_BATCH]
                    future = loop.run_in_executor(pool, embed_batch, dim, batch)
                    future.add_done_callback(_silence)
                    inflight[future] = batch
            if not inflight:
                return
            done, _ = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                result = future.result()
                del inflight[future]
                yield result
    except BrokenProcessPool:
        for batch in list(inflight.values()):
            yield await asyncio.to_thread(embed_batch, dim, batch)
        async for page in pages:
            for start in range(0, len(page), EMBED_BATCH):
                yield await asyncio.to_thread(embed_batch, dim, page[start : start + EMBED_BATCH])
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
