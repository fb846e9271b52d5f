"""Read, hash, parse and (optionally) embed changed files, in parallel across cores.

Tree-sitter parsing and the offline embedder are CPU-bound Python work, so big batches
go to a process pool (one worker per core, batches of `BATCH` files) and small ones run in
a thread, which avoids the pool's start-up cost for the common one-file update. Workers
receive paths, not contents, and return results per batch so the caller can write and
report progress while the rest is still parsing.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import os
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from aistack_tui.knowledge.extract import extract
from aistack_tui.knowledge.store import ParsedFile, embed_text
from aistack_tui.knowledge.types import FileExtraction
from aistack_tui.knowledge.walker import never_indexed, resolved_inside

BATCH = 48
EMBED_BATCH = 256
EMBED_POOL_THRESHOLD = 1000
POOL_THRESHOLD = 200
"""Fewer changed files than this are parsed in a thread: a pool costs ~100 ms to start."""
_BINARY_SNIFF = 8192
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class ParseJob:
    path: str
    language: str
    size: int
    mtime_ns: int
    known_hash: str


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    """`status` is `parsed` (new content), `same` (hash unchanged) or `skipped`."""

    status: str
    job: ParseJob
    parsed: ParsedFile | None = None
    vectors: tuple[bytes, ...] = ()


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


def parse_batch(root: str, jobs: Sequence[ParseJob], embed_dim: int) -> list[ParseOutcome]:
    """Worker entry point (must stay a top-level function so a pool can pickle it)."""
    out: list[ParseOutcome] = []
    for job in jobs:
        # Checked again here, where the file is read: a file swapped for a symlink out of
        # the project (or into .git/, a secrets file...) after the walk is not read.
        target = resolved_inside(root, job.path)
        if target is None or never_indexed(target) or never_indexed(job.path):
            out.append(ParseOutcome("skipped", job))
            continue
        try:
            with open(os.path.join(root, job.path), "rb") as f:
                data = f.read()
        except OSError:
            out.append(ParseOutcome("skipped", job))
            continue
        if b"\x00" in data[:_BINARY_SNIFF]:
            out.append(ParseOutcome("skipped", job))
            continue
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if digest == job.known_hash:
            out.append(ParseOutcome("same", job))
            continue
        try:
            extraction = extract(data, job.language)
        except (ValueError, RecursionError):
            extraction = extract(data, "text")
        parsed = ParsedFile(job.path, len(data), job.mtime_ns, digest, extraction)
        vectors = _embed_chunks(job.path, extraction, embed_dim) if embed_dim else ()
        out.append(ParseOutcome("parsed", job, parsed, vectors))
    return out


def _pool(workers: int) -> Executor:
    # forkserver: the event loop's threads (aiosqlite, the TUI) make plain fork unsafe.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))


async def _map_batches(
    fn: Callable[..., R], batches: Sequence[tuple[Any, ...]], use_pool: bool, workers: int
) -> AsyncIterator[R]:
    """`fn(*batch)` for every batch, in a process pool or a thread, in completion order."""
    if not use_pool:
        for batch in batches:
            yield await asyncio.to_thread(fn, *batch)
        return
    loop = asyncio.get_running_loop()
    pool = _pool(min(workers, len(batches)))
    remaining = dict(enumerate(batches))
    try:
        futures = {
            loop.run_in_executor(pool, fn, *batch): index for index, batch in remaining.items()
        }
        for future in futures:
            # After a failure the other futures fail too; nobody awaits them, so mark
            # their exceptions as seen instead of logging "never retrieved" for each.
            future.add_done_callback(_silence)
        pending = set(futures)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                result = future.result()
                del remaining[futures[future]]
                yield result
    except BrokenProcessPool:
        # A worker could not start or died (e.g. the main module cannot be re-imported):
        # finish in a thread rather than fail the refresh.
        for batch in list(remaining.values()):
            yield await asyncio.to_thread(fn, *batch)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _silence(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _cores(workers: int | None) -> int:
    return workers or os.cpu_count() or 1


async def run_jobs(
    root: str, jobs: Sequence[ParseJob], *, embed_dim: int = 0, workers: int | None = None
) -> AsyncIterator[list[ParseOutcome]]:
    """Parse (and, with `embed_dim`, embed) files; yield outcomes batch by batch."""
    batches = [(root, list(jobs[i : i + BATCH]), embed_dim) for i in range(0, len(jobs), BATCH)]
    use_pool = len(jobs) >= POOL_THRESHOLD and _cores(workers) > 1
    async for outcomes in _map_batches(parse_batch, batches, use_pool, _cores(workers)):
        yield outcomes


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
    pool = _pool(cores)
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
