"""`KnowledgeIndex`: the code index of one project, as the agent and the CLI use it.

Lifecycle: `open` (cheap: opens the database, loads nothing else) →
`start_background_refresh` (walks the tree, re-parses only files whose content hash
changed, then, after a big build, reads their references in a second pass, embeds new
chunks, rebuilds the repo-map graph; optionally keeps polling) →
`search` / `context_block` at any time, answering from whatever is indexed so far →
`close`. A refresh never blocks a turn: searches interleave with its batches, and the
repo map uses the graph of the previous refresh until the new one is ready.

Every answer is filtered at query time, not only when indexing: a file that is agent
configuration or a secret, that now resolves outside the project, or that `read_allowed`
(the session's permission engine: a Read deny rule, a secrets file) refuses, is left out
of search results, the injected chunks and the repo map. So a deny rule added after the
index was built, or an index an earlier session built without it, cannot leak the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import posixpath
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import Executor
from itertools import islice
from pathlib import Path

from aistack_tui.knowledge.injection import build_context_block
from aistack_tui.knowledge.languages import language_for
from aistack_tui.knowledge.pipeline import (
    EMBED_POOL_THRESHOLD,
    POOL_THRESHOLD,
    ParseJob,
    build_pool,
    run_embeddings,
    walk_in_worker,
)
from aistack_tui.knowledge.repo_map import RepoGraph, build_graph
from aistack_tui.knowledge.search import hybrid_search
from aistack_tui.knowledge.store import FileState, IndexStore
from aistack_tui.knowledge.types import CodeHit, IndexStats
from aistack_tui.knowledge.walker import (
    MAX_FILE_BYTES,
    WalkEntry,
    never_indexed,
    resolved_inside,
    walk,
)
from aistack_tui.knowledge.watcher import poll_forever
from aistack_tui.knowledge.writer import Progress, store_pending_references, write_parsed
from aistack_tui.storage.disposable_thread import run_disposable
from aistack_tui.storage.embeddings import Embedder
from aistack_tui.storage.hashing_embedder import HashingEmbedder, serialize_f32
from aistack_tui.storage.paths import project_data_dir

log = logging.getLogger(__name__)

INDEX_FILENAME = "index.db"
DEFAULT_DIM = 128
"""Dimensions of the default offline embedder for code. The hashing embedder is lexical
(bm25 and symbol names carry the precision; vectors add typo and sub-word recall), and
brute-force KNN time is linear in dimensions: 128 keeps a 50k-chunk scan near 15 ms
where 384 takes about 45 ms, with the same hit@5 on the labelled search test."""
EMBED_BATCH = 64
EMBED_FETCH = 8192
GRAPH_DEBOUNCE_S = 0.5
"""After a small update the repo-map rebuild waits this long: edits come in bursts."""
FIRST_BUILD_IDLE_S = 1.0
FIRST_BUILD_AFTER_TURN_S = 0.25


class KnowledgeIndex:
    """One project's code index (see the module docstring for the lifecycle)."""

    def __init__(self, store: IndexStore, project_root: Path, embedder: Embedder) -> None:
        self.store = store
        self.project_root = project_root
        self.embedder = embedder
        self.graph: RepoGraph | None = None
        self.last_stats: IndexStats | None = None
        self.last_context = ""
        """The block the last `context_block` call returned (for `/context`)."""
        self.chunk_count = 0
        self._lock = asyncio.Lock()
        self._embed_lock = asyncio.Lock()
        self._refs_lock = asyncio.Lock()
        self._graph_owed = False
        """A big write left the map's rebuild to the end of the reference pass."""
        self._task: asyncio.Task[None] | None = None
        self._graph_task: asyncio.Task[None] | None = None
        self._graph_stale = False
        self._closed = False
        self.first_build = False
        """A build of an empty index is running: turns get no code context until it is
        searchable (see `context_block`)."""
        self._listeners: list[Callable[[str], None]] = []
        self._phase = ""
        self._long = False
        """A build big enough to be worth a status line (see `_phase_reporter`)."""
        self._turn_seen = asyncio.Event()
        self.read_allowed: Callable[[Path], bool] | None = None
        """Whether the session's permission engine lets Read see a file (given to
        `open`); None: every indexed file."""

    @classmethod
    async def open(
        cls,
        home: Path,
        project_root: Path,
        embedder: Embedder | None = None,
        *,
        read_allowed: Callable[[Path], bool] | None = None,
    ) -> KnowledgeIndex:
        root = project_root.expanduser().resolve()
        if not root.is_dir():
            raise NotADirectoryError(f"cannot index {project_root}: not a directory")
        store = await IndexStore.open(project_data_dir(home, root) / INDEX_FILENAME)
        embedder = embedder or HashingEmbedder(DEFAULT_DIM)
        await store.ensure_vectors(embedder.name, embedder.dim)
        index = cls(store, root, embedder)
        index.chunk_count = (await store.counts())[2]
        index.read_allowed = read_allowed
        return index

    # -- refreshing -------------------------------------------------------------------

    async def refresh(
        self,
        progress: Progress | None = None,
        *,
        on_phase: Callable[[str], None] | None = None,
    ) -> IndexStats:
        """Bring the index up to date with the tree; only changed files are re-parsed."""
        pool: Executor | None = None
        try:
            async with self._lock:
                started = time.perf_counter()
                states = await self.store.file_states()
                self.first_build = not states
                phase = self._phase_reporter(on_phase)
                phase("scanning")
                try:
                    # Worker processes cost ~100 ms to start: worth it for a big first
                    # build only, whose walk, parse and reference passes share them.
                    big = self.first_build and not await asyncio.to_thread(self._small_tree)
                    pool = await build_pool() if big else None
                    found = await walk_in_worker(str(self.project_root), pool) if pool else None
                    # Disposable threads: a print-mode run that ends meanwhile must not wait.
                    entries = found if found is not None else await run_disposable(
                        lambda: list(walk(self.project_root)), "index-walk"
                    )
                    if len(entries) < POOL_THRESHOLD:
                        self.first_build = False  # small: done in a moment, turns may use it
                    seen = {e.path for e in entries}
                    removed = [p for p in states if p not in seen]
                    stats = await self._apply(
                        entries, removed, states, progress, phase, started=started, pool=pool
                    )
                except BaseException:
                    phase("")
                    self._long = False
                    raise
                finally:
                    self.first_build = False
                stats.searchable_seconds = time.perf_counter() - started
            try:
                await self._fill_references(stats, started, phase, pool)
                if not self._closed and await self.store.merge_owed():
                    await self.store.merge_segments(closed=lambda: self._closed)
                if pool is not None:
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = None
                phase("embedding" if await self.store.pending_count() else "")
                stats.chunks_embedded += await self._embed_pending(progress)
            finally:
                phase("")
                self._long = False
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        stats.seconds = time.perf_counter() - started
        self.last_stats = stats
        if self.store.vector_cache is not None and not self._closed:
            # Searches from now on use the in-memory vectors; `vec0` answers meanwhile.
            self.store.vector_cache.start_loading()
        return stats

    def add_listener(self, listener: Callable[[str], None]) -> None:
        """Call `listener` with each phase of a refresh ("scanning", "parsing",
        "embedding", "ranking"), and "" when the index is searchable and idle again (a
        front end's status line)."""
        self._listeners.append(listener)

    @property
    def phase(self) -> str:
        """What a refresh is doing now ("" when none is running)."""
        return self._phase

    def _phase_reporter(self, on_phase: Callable[[str], None] | None) -> Callable[[str], None]:
        def report(phase: str) -> None:
            if on_phase is not None and phase:
                on_phase(phase)
            # The watcher refreshes every few seconds and a one-file update takes tens of
            # milliseconds: status lines hear only of builds that parse a pool's worth of
            # files (`POOL_THRESHOLD`), and of nothing twice.
            if phase == self._phase or (phase and not self._long):
                return
            self._phase = phase
            for listener in self._listeners:
                try:
                    listener(phase)
                except Exception:  # a front end's status must never break indexing
                    log.exception("index status listener failed")

        return report

    async def refresh_paths(self, paths: Iterable[str | Path]) -> IndexStats:
        """Re-check just these files (after an Edit or Write), without walking the tree."""
        async with self._lock:
            started = time.perf_counter()
            wanted = [
                r for r in (self._relative(raw) for raw in paths)
                if r is not None and not never_indexed(r)
            ]
            states = await self.store.file_states(wanted)
            entries: list[WalkEntry] = []
            removed: list[str] = []
            for rel in wanted:
                full = self.project_root / rel
                try:
                    st = full.stat()
                except OSError:
                    if rel in states:
                        removed.append(rel)
                    continue
                language = language_for(rel)
                if language and full.is_file() and 0 < st.st_size <= MAX_FILE_BYTES:
                    entries.append(WalkEntry(rel, st.st_size, st.st_mtime_ns, language))
            stats = await self._apply(
                entries, removed, states, None, None, full_scan=False, started=started
            )
            stats.searchable_seconds = time.perf_counter() - started
        await self._fill_references(stats, started, None)
        stats.chunks_embedded += await self._embed_pending(None)
        stats.seconds = time.perf_counter() - started
        return stats

    def _relative(self, raw: str | Path) -> str | None:
        path = Path(raw)
        if path.is_absolute():
            try:
                path = path.resolve().relative_to(self.project_root)
            except ValueError:
                return None
        text = posixpath.normpath(path.as_posix())
        if text == ".." or text.startswith("../"):
            return None  # outside the project
        return text

    async def _apply(
        self,
        entries: Sequence[WalkEntry],
        removed: Sequence[str],
        states: dict[str, FileState],
        progress: Progress | None,
        on_phase: Callable[[str], None] | None,
        *,
        full_scan: bool = True,
        started: float,
        pool: Executor | None = None,
    ) -> IndexStats:
        stats = IndexStats(files_seen=len(entries) if full_scan else 0)
        jobs = _changed_files(entries, states, stats)
        self._long = len(jobs) >= POOL_THRESHOLD
        if on_phase and jobs:
            on_phase("parsing")
        if progress:
            progress(0, len(jobs))
        # A few files are embedded right in the parse workers; a big batch is parsed
        # first (text and symbol search become usable) and embedded afterwards.
        embed_dim = 0
        if self.store.vec_dim and self._offline_embedder and len(jobs) < POOL_THRESHOLD:
            embed_dim = self.embedder.dim
        bulk = len(jobs) >= POOL_THRESHOLD
        if bulk:
            await self.store.bulk_mode(True)
        try:
            await write_parsed(
                self.store, str(self.project_root), jobs, states, stats, progress,
                embed_dim=embed_dim, references=not bulk, pool=pool,
            )  # fmt: skip
        finally:
            if bulk:
                await self.store.bulk_mode(False)
        if removed:
            await self.store.remove(removed, states)
            stats.removed = len(removed)
        stats.files_total, stats.symbols_total, stats.chunks_total = await self.store.counts()
        self.chunk_count = stats.chunks_total
        await self._after_apply(stats, started, on_phase, full_scan=full_scan, bulk=bulk)
        return stats

    async def _after_apply(
        self,
        stats: IndexStats,
        started: float,
        on_phase: Callable[[str], None] | None,
        *,
        full_scan: bool,
        bulk: bool,
    ) -> None:
        """The repo map after an update: ranked now (a first small build), owed to the
        references' second pass (a big build), or rebuilt in the background."""
        if self.graph is None and full_scan and not bulk:
            if on_phase:
                on_phase("ranking")
            await self.rebuild_graph()
            stats.map_seconds = time.perf_counter() - started
        elif bulk and stats.parsed:
            self._graph_owed = True  # after the references: see `_fill_references`
        elif stats.parsed or stats.removed or self.graph is None:
            # The rebuild reads every reference (about 2 s of CPU on a 2,000-file tree),
            # so after a big build or any update it runs in the background: text and
            # symbol search are usable at once, and turns use the previous map (or none,
            # on a first build) until the new one is ready. After a small update it
            # starts a moment later, so a burst of edits costs one rebuild and the
            # rebuild does not compete with the update's own embedding.
            delay = 0.0 if bulk else GRAPH_DEBOUNCE_S
            self._schedule_graph_rebuild(stats, started, delay=delay)

    async def _fill_references(
        self,
        stats: IndexStats,
        started: float,
        phase: Callable[[str], None] | None,
        pool: Executor | None = None,
    ) -> None:
        """The second pass of a big build (`writer.store_pending_references`), then the
        repo map from its references.

        Like the embedding, it runs outside the refresh lock (an edit's update is never
        stuck behind it), one pass at a time: a refresh that finds one running leaves
        its files, and the map's rebuild, to it.
        """
        if self._refs_lock.locked():
            return
        async with self._refs_lock:
            tried = await store_pending_references(
                self.store, str(self.project_root), pool,
                closed=lambda: self._closed,
                on_start=lambda: phase("ranking") if phase is not None else None,
            )  # fmt: skip
            if self._closed:
                return
            if tried:
                stats.references_seconds = time.perf_counter() - started
            if tried or self._graph_owed:
                self._graph_owed = False
                self._schedule_graph_rebuild(stats, started)

    def _schedule_graph_rebuild(
        self, stats: IndexStats | None = None, started: float = 0.0, *, delay: float = 0.0
    ) -> None:
        """Rebuild the repo-map graph in a task; `stats.map_seconds` records when it is ready."""
        if self._graph_task is not None and not self._graph_task.done():
            self._graph_stale = True
            return

        async def rebuild() -> None:
            self._graph_stale = True
            if delay:
                await asyncio.sleep(delay)
            while self._graph_stale and not self._closed:
                self._graph_stale = False
                await self.rebuild_graph()
            if stats is not None:
                stats.map_seconds = time.perf_counter() - started

        self._graph_task = asyncio.get_running_loop().create_task(rebuild())

    async def wait_for_graph(self) -> None:
        """Wait for a scheduled repo-map rebuild (tests and the benchmark)."""
        if self._graph_task is not None:
            await self._graph_task

    @property
    def _offline_embedder(self) -> bool:
        return isinstance(self.embedder, HashingEmbedder)

    async def _embed_pending(self, progress: Progress | None) -> int:
        """Embed chunks that have no vector yet, across cores for the offline embedder.

        Runs outside the refresh lock, so a targeted update is never stuck behind a long
        first embedding; only one such loop runs at a time (others return at once, and
        the running one picks their chunks up).
        """
        if not self.store.vec_dim or self._embed_lock.locked():
            return 0
        async with self._embed_lock:
            total = await self.store.pending_count()
            if not total:
                return 0
            count = 0
            if progress:
                progress(0, total)
            try:
                async for rows in self._embed_rows(self._pending_pages(), total):
                    await self.store.store_vectors(rows)
                    count += len(rows)
                    if progress:
                        progress(min(count, total), max(total, count))
            except Exception as e:  # a remote embedder failing must not break indexing
                log.warning("embedding failed, vector search uses what is ready: %s", e)
            return count

    async def _pending_pages(self) -> AsyncIterator[list[tuple[int, str]]]:
        after = 0
        while not self._closed:
            page = await self.store.pending_embeddings(EMBED_FETCH, after)
            if not page:
                return
            after = page[-1][0]
            yield page

    async def _embed_rows(
        self, pages: AsyncIterator[list[tuple[int, str]]], total: int
    ) -> AsyncIterator[list[tuple[int, bytes]]]:
        if self._offline_embedder:
            use_pool = total >= EMBED_POOL_THRESHOLD
            async for rows in run_embeddings(self.embedder.dim, pages, use_pool=use_pool):
                yield rows
            return
        async for page in pages:
            for start in range(0, len(page), EMBED_BATCH):
                part = page[start : start + EMBED_BATCH]
                vectors = await self.embedder.embed([text for _, text in part])
                yield [(cid, serialize_f32(v)) for (cid, _), v in zip(part, vectors, strict=True)]

    async def rebuild_graph(self) -> None:
        """Reload the definition/reference graph and its ranks from the database."""
        db = self.store.db
        paths = {int(r[0]): str(r[1]) for r in await db.execute_fetchall(
            "SELECT id, path FROM files")}  # fmt: skip
        definitions = [(int(r[0]), str(r[1])) for r in await db.execute_fetchall(
            "SELECT file_id, name FROM symbols WHERE kind != 'heading'")]  # fmt: skip
        references = [(int(r[0]), str(r[1]), int(r[2])) for r in await db.execute_fetchall(
            "SELECT file_id, name, count FROM refs")]  # fmt: skip
        self.graph = await run_disposable(
            lambda: build_graph(paths, definitions, references), "repo-map-graph"
        )

    def start_background_refresh(
        self, *, watch_interval: float | None = None, defer_first_build: bool = False
    ) -> asyncio.Task[None]:
        """Refresh in the background (and then keep polling every `watch_interval` s).

        The first turn never waits for this: searches answer from what is indexed so far.
        With `defer_first_build` (a session), building an empty index of a big project
        (a pool's worth of files) starts only once the first turn's request is on its way
        (`FIRST_BUILD_AFTER_TURN_S` after its context was assembled) or after
        `FIRST_BUILD_IDLE_S` without a turn: on two cores, the walk and the pool's
        start-up alone would otherwise delay that request. A small project is indexed at
        once, in well under a second, so even its first turn gets code context.
        """
        if self._task is not None and not self._task.done():
            return self._task

        async def runner() -> None:
            try:
                if self.graph is None and self.chunk_count:
                    await self.rebuild_graph()  # a previous session's index is usable now
                if defer_first_build and not self.chunk_count and not await asyncio.to_thread(
                    self._small_tree
                ):
                    self.first_build = True
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._turn_seen.wait(), FIRST_BUILD_IDLE_S)
                        await asyncio.sleep(FIRST_BUILD_AFTER_TURN_S)
                await self.refresh()
                if watch_interval:
                    await poll_forever(self.refresh, watch_interval)
            except asyncio.CancelledError:
                raise
            except Exception:  # keep the session alive; the index is best effort
                log.exception("background index refresh failed")

        self._task = asyncio.get_running_loop().create_task(runner(), name="knowledge-refresh")
        return self._task

    def _small_tree(self) -> bool:
        """Whether the project has fewer indexable files than a pool is started for (the
        walk stops as soon as it has found that many)."""
        return next(islice(walk(self.project_root), POOL_THRESHOLD, None), None) is None

    # -- querying ---------------------------------------------------------------------

    def visible(self) -> Callable[[str], bool]:
        """A per-query check of project-relative paths (see the module docstring)."""
        root = str(self.project_root)
        allowed = self.read_allowed
        seen: dict[str, bool] = {}

        def check(rel: str) -> bool:
            known = seen.get(rel)
            if known is not None:
                return known
            target = None if never_indexed(rel) else resolved_inside(root, rel)
            ok = target is not None and not never_indexed(target)
            if ok and allowed is not None:
                try:
                    ok = allowed(self.project_root / rel)
                except Exception:  # fail closed: an error must not show the file
                    ok = False
            seen[rel] = ok
            return ok

        return check

    async def search(self, query: str, limit: int = 10) -> list[CodeHit]:
        """Hybrid search (FTS5 + vectors + symbol names, fused with RRF)."""
        if not query.strip():
            return []
        return await hybrid_search(
            self.store, self.embedder, query, max(1, min(limit, 100)), visible=self.visible()
        )

    async def context_block(
        self, message: str, mentioned_files: list[str], token_budget: int
    ) -> str:
        """Repo map + top chunks for this message, within `token_budget` (≈ chars/4)."""
        self._turn_seen.set()
        if self.first_build:
            # A partial first build has no map and an arbitrary share of the chunks, and
            # its writes hold the connection: answering would only delay the turn.
            self.last_context = ""
            return ""
        mentioned = [r for r in (self._relative(p) for p in mentioned_files) if r]
        block = await build_context_block(
            self.store, self.embedder, self.graph, message, mentioned, token_budget,
            chunk_count=self.chunk_count, visible=self.visible(),
        )  # fmt: skip
        self.last_context = block
        return block

    async def status(self) -> dict[str, object]:
        """Counts and state for `aistack doctor` and `/context`."""
        files, symbols, chunks = await self.store.counts()
        return {
            "files": files,
            "symbols": symbols,
            "chunks": chunks,
            "vectors": bool(self.store.vec_dim),
            "refreshing": self._task is not None and not self._task.done(),
            "phase": self._phase,
            "first_build": self.first_build,
            "root": str(self.project_root),
        }

    async def close(self) -> None:
        self._closed = True
        for task in (self._task, self._graph_task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await self.store.close()


def _changed_files(
    entries: Sequence[WalkEntry], states: dict[str, FileState], stats: IndexStats
) -> list[ParseJob]:
    """Parse jobs for the files whose size or mtime changed (the others are counted as
    unchanged in `stats`)."""
    jobs: list[ParseJob] = []
    for entry in entries:
        state = states.get(entry.path)
        if state and state.size == entry.size and state.mtime_ns == entry.mtime_ns:
            stats.unchanged += 1
            continue
        jobs.append(
            ParseJob(entry.path, entry.language, entry.size, entry.mtime_ns,
                     state.hash if state else "")
        )  # fmt: skip
    return jobs
