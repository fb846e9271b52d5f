"""`MemoryManager`: the one object the agent, tools and CLI talk to.

It owns a connection to `$AISTACK_HOME/aistack.db`, the embedder, the vector indexes,
the session search and the three policies. Reads never block on writes (WAL); each write
is its own short transaction, so a TUI and a print-mode run can share the database.
Embedding happens outside transactions; memories written while no vector could be made
(or before an embedder switch) are embedded by a background task.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aistack_tui.llm.types import Message
from aistack_tui.memory.embedders import EmbedderConfigError, select_embedder
from aistack_tui.memory.models import (
    KINDS,
    USER_SCOPE,
    Kind,
    MemoryHit,
    MemoryOperationError,
    MemoryRecord,
    parse_kind,
)
from aistack_tui.memory.policies import BudgetPolicy, RetrievalPolicy, Section, WritePolicy
from aistack_tui.memory.retrieval import Weighting, fuse
from aistack_tui.memory.session_search import SessionSearch, project_key
from aistack_tui.memory.store import (
    DB_ERRORS,
    MIGRATIONS,
    NAMESPACE,
    MemoryStore,
    clean_content,
    migrate_pending,
)
from aistack_tui.memory.vectors import VectorIndex
from aistack_tui.storage.db import StorageError, open_database
from aistack_tui.storage.embeddings import Embedder
from aistack_tui.storage.hashing_embedder import HashingEmbedder
from aistack_tui.storage.paths import database_path

log = logging.getLogger(__name__)

TASK_STATE_KEY = "task_state"
SUMMARY_KEY = "summary"
TASK_STATE_FRESH_SECONDS = 12 * 3600
"""Task state older than this (and not set by this process) is stale: another task."""
CANDIDATES = 50
HEADER = "Long-term memory (from earlier turns and sessions; verify before relying on it):"


def parse_memory_id(value: str) -> int:
    """`m12` or `12` → 12; anything else is a clear error."""
    raw = value.strip().lower().removeprefix("m")
    if not raw.isdigit():
        raise MemoryOperationError(
            f"invalid memory id {value!r}: use the id shown by `memory list`"
        )
    return int(raw)


class MemoryManager:
    """Five layers (profile, task state, summary, episodic, semantic) for one project."""

    def __init__(
        self,
        store: MemoryStore,
        project_root: Path,
        embedder: Embedder,
        *,
        retrieval: RetrievalPolicy | None = None,
        write_policy: WritePolicy | None = None,
        budget: BudgetPolicy | None = None,
        weighting: Weighting | None = None,
    ) -> None:
        self.store = store
        self.project_root = project_root
        self.project = project_key(project_root)
        self.retrieval = retrieval or RetrievalPolicy(
            min_similarity=0.3 if isinstance(embedder, HashingEmbedder) else 0.4,
            search_similarity=0.1 if isinstance(embedder, HashingEmbedder) else 0.2,
        )
        self.write_policy = write_policy or WritePolicy()
        self.budget = budget or BudgetPolicy()
        self.weighting = weighting or Weighting()
        self.session_id: str | None = None
        """The live session (set by `after_turn`, or by the host): its own messages are
        never offered back to it as "past sessions"."""
        self._task_state_set_here = False
        self._cache: dict[tuple[str, int], str] = {}
        self._background: asyncio.Task[None] | None = None
        self._again = False
        self._load_in_background = False
        self._use_embedder(embedder)

    # --- opening and closing --------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        home: Path,
        project_root: Path,
        embedder: Embedder | None = None,
        *,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ) -> MemoryManager:
        """Open (creating and migrating) memory in `$home/aistack.db` for a project.

        Raises MemoryOperationError for a bad `AISTACK_EMBEDDER` and StorageError when the
        database cannot be opened. Without sqlite-vec, search uses FTS5 alone and
        `capabilities.vec_error` says how to fix it.
        """
        if embedder is None:
            try:
                embedder = select_embedder(os.environ if env is None else env)
            except EmbedderConfigError as e:
                raise MemoryOperationError(str(e)) from e
        db, caps = await open_database(database_path(home), (), namespace=NAMESPACE)
        try:
            from aistack_tui.sessions.sqlite_store import MIGRATIONS as SESSION_MIGRATIONS

            await migrate_pending(db, MIGRATIONS, NAMESPACE)
            # Past-session search reads the sessions tables: make sure they exist even
            # when memory is opened first.
            await migrate_pending(db, SESSION_MIGRATIONS, "sessions")
            if caps.vec_error:
                log.warning("memory: %s", caps.vec_error)
            manager = cls(MemoryStore(db, caps, clock=clock), project_root, embedder)
            await manager._ensure_indexes()
        except BaseException:
            await db.close()
            raise
        if background:  # long-lived: large indexes load into RAM meanwhile (vectors.py)
            manager._load_in_background = True
            for index in (manager.index, manager.sessions.index):
                index.load_in_background = True
                index.start_loading()
            manager.start_background()
        return manager

    async def close(self) -> None:
        task, self._background = self._background, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.index.stop_loading()
        await self.sessions.index.stop_loading()
        await self.store.db.close()

    @property
    def capabilities(self) -> Any:
        return self.store.capabilities

    def _use_embedder(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.index = VectorIndex(
            self.store.db,
            prefix="memory",
            embedder_name=embedder.name,
            dim=embedder.dim,
            vec_enabled=self.store.capabilities.vec,
        )
        self.sessions = SessionSearch(
            self.store, embedder, min_similarity=self.retrieval.min_similarity,
            clock=self.store.clock,
        )
        self.index.load_in_background = self._load_in_background
        self.sessions.index.load_in_background = self._load_in_background

    async def _ensure_indexes(self) -> None:
        async def work() -> None:
            await self.index.ensure("SELECT id AS item_id, project AS part FROM memories")
            await self.index.prune_log()

        await self.store.write(work)
        await self.sessions.ensure_index()

    # --- embedding and the background catch-up ---------------------------------------------

    async def _embed(self, texts: list[str]) -> list[list[float]] | None:
        """Vectors from the current embedder; a failing provider is swapped for the
        offline embedder (once) rather than breaking memory."""
        try:
            return await self.embedder.embed(texts)
        except Exception as e:
            if isinstance(self.embedder, HashingEmbedder):
                log.warning("memory: embedding failed: %s", e)
                return None
            log.warning(
                "memory: embedder %s failed (%s); using the offline embedder instead",
                self.embedder.name, e,
            )
            self._use_embedder(HashingEmbedder())
            await self._ensure_indexes()
            self.start_background()
            return await self.embedder.embed(texts)

    def start_background(self) -> None:
        """Embed what has no vector from the current embedder (memories, then past
        session messages), in the background; a second call while running re-runs it."""
        if self._background is not None and not self._background.done():
            self._again = True
            return
        self._background = asyncio.get_running_loop().create_task(self._catch_up())

    async def wait_idle(self) -> None:
        """Wait for the background catch-up (tests, CLI, benchmarks)."""
        while self._background is not None and not self._background.done():
            await asyncio.wait({self._background})

    async def _catch_up(self) -> None:
        try:
            while True:
                self._again = False
                await self.reembed()
                await self.sessions.index_pending()
                if not self._again:
                    return
        except (StorageError, ValueError, *DB_ERRORS) as e:
            log.warning("memory: background indexing stopped: %s", e)

    async def reembed(self, batch: int = 64) -> int:
        """Give every memory a vector from the current embedder; returns how many."""
        done = 0
        while True:
            missing = await self.store.missing_vectors(self.embedder.name, batch)
            if not missing:
                break
            vectors = await self._embed([content for _, content, _ in missing])
            if vectors is None:
                return done

            async def work(
                missing: list[tuple[int, str, str]] = missing,
                vectors: list[list[float]] = vectors,
            ) -> None:
                for (item_id, _, project), vector in zip(missing, vectors, strict=True):
                    await self.index.upsert(item_id, project, vector)

            await self.store.write(work)
            done += len(missing)
        if done:
            await self.store.write(lambda: self.store.drop_other_vectors(self.embedder.name))
        return done

    # --- writing -----------------------------------------------------------------------------

    async def write(
        self,
        content: str,
        kind: str = "semantic",
        *,
        source: str,
        session_id: str | None = None,
        pinned: bool = False,
        importance: float | None = None,
        message_id: str | None = None,
        created_at: float | None = None,
    ) -> MemoryRecord:
        """Store a memory, or merge it into the near-duplicate already stored.

        Profile memories are user-wide; the others belong to this project.
        """
        try:
            text = clean_content(content)
        except ValueError as e:
            raise MemoryOperationError(str(e)) from e
        layer: Kind = parse_kind(kind)
        project = USER_SCOPE if layer == "profile" else self.project
        weight = importance if importance is not None else (0.8 if layer == "profile" else 0.5)
        vectors = await self._embed([text])
        vector = vectors[0] if vectors else None

        async def similarity(ids: list[int]) -> dict[int, float]:
            if vector is None:
                return {}
            return dict(await self.index.rescore(vector, ids, len(ids)))

        async def work() -> MemoryRecord:
            existing = await self.store.find_duplicate(
                text, layer, project, similarity=similarity
            )
            if existing is not None:
                record = await self.store.merge_into(existing, text, weight, pinned)
            else:
                record = await self.store.insert(
                    text, layer, project, source=source, session_id=session_id,
                    message_id=message_id, importance=weight, pinned=pinned,
                    created_at=created_at,
                )
            if vector is not None and (existing is None or record.content == text):
                await self.index.upsert(record.id, project, vector)
            return record

        record = await self.store.write(work)
        self._cache.clear()
        return record

    async def after_turn(self, messages: list[Message], session_id: str) -> None:
        """Keep what the write policy finds in the finished turn; index its messages."""
        self.session_id = session_id
        for item in self.write_policy.extract(messages):
            try:
                await self.write(
                    item.content, item.kind, source=item.source, session_id=session_id,
                    importance=item.importance, message_id=item.message_id,
                )
            except (MemoryOperationError, StorageError) as e:
                log.warning("memory: could not store %r: %s", item.content[:60], e)
        self.start_background()

    async def set_task_state(self, text: str) -> None:
        await self.store.write(
            lambda: self.store.set_state(self.project, TASK_STATE_KEY, text, self.session_id)
        )
        self._task_state_set_here = bool(text.strip())
        self._cache.clear()

    async def set_summary(self, text: str, session_id: str) -> None:
        await self.store.write(
            lambda: self.store.set_state(self.project, SUMMARY_KEY, text, session_id)
        )
        self._cache.clear()

    # --- review ------------------------------------------------------------------------------

    async def get(self, memory_id: int) -> MemoryRecord:
        return await self.store.get(memory_id)

    async def list(self, kinds: Sequence[str] = (), limit: int = 100) -> list[MemoryRecord]:
        checked = [parse_kind(k) for k in kinds]
        return await self.store.list([self.project, USER_SCOPE], checked, limit=limit)

    async def forget(self, memory_id: int) -> None:
        async def work() -> None:
            await self.store.delete(memory_id)
            await self.index.delete(memory_id)

        await self.store.write(work)
        self._cache.clear()

    async def pin(self, memory_id: int, pinned: bool = True) -> None:
        await self.store.write(lambda: self.store.set_pinned(memory_id, pinned))
        self._cache.clear()

    async def edit(self, memory_id: int, content: str) -> MemoryRecord:
        try:
            text = clean_content(content)
        except ValueError as e:
            raise MemoryOperationError(str(e)) from e
        record = await self.store.get(memory_id)
        vectors = await self._embed([text])

        async def work() -> None:
            await self.store.update_content(memory_id, text)
            if vectors:
                await self.index.upsert(memory_id, record.project, vectors[0])

        await self.store.write(work)
        self._cache.clear()
        return await self.store.get(memory_id)

    async def export_records(self) -> list[dict[str, Any]]:
        """Every memory of this project and the user's, oldest first, as JSON objects."""
        records = await self.store.list([self.project, USER_SCOPE], limit=10**9)
        return [r.to_json() for r in sorted(records, key=lambda r: r.id)]

    async def import_records(self, lines: Iterable[str]) -> tuple[int, int]:
        """Import JSONL written by export; returns (stored, merged). Bad lines raise a
        MemoryOperationError naming the line before anything is written."""
        items: list[dict[str, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict) or not isinstance(data.get("content"), str):
                    raise ValueError("expected an object with a string `content`")
                parse_kind(str(data.get("kind", "semantic")))
            except (ValueError, MemoryOperationError) as e:
                raise MemoryOperationError(f"line {number}: {e}") from e
            items.append(data)
        stored = merged = 0
        for data in items:
            before = await self.store.count()
            await self.write(
                data["content"], str(data.get("kind", "semantic")),
                source=str(data.get("source") or "import"),
                session_id=data.get("session_id"), pinned=bool(data.get("pinned", False)),
                importance=float(data.get("importance", 0.5)),
                message_id=data.get("message_id"), created_at=data.get("created_at"),
            )
            if await self.store.count() > before:
                stored += 1
            else:
                merged += 1
        return stored, merged

    # --- search ------------------------------------------------------------------------------

    async def search_memories(
        self,
        query: str,
        limit: int = 10,
        *,
        mode: str = "hybrid",
        kinds: Sequence[str] = (),
        query_vector: list[float] | None = None,
        min_similarity: float | None = None,
    ) -> list[MemoryHit]:
        """Memories of this project and the user's, by `mode`: hybrid, fts or vector.

        `min_similarity` overrides the retrieval policy's bar for vector neighbours.
        """
        if mode not in ("hybrid", "fts", "vector"):
            raise MemoryOperationError(f"unknown search mode {mode!r}")
        scopes = [self.project, USER_SCOPE]

        async def lexical_list() -> list[int]:
            wanted = mode in ("hybrid", "fts")
            return await self.store.lexical(query, scopes, kinds, limit=CANDIDATES * wanted)

        async def vector_list(qvec: list[float] | None) -> list[tuple[int, float]]:
            if mode not in ("hybrid", "vector") or not query.strip():
                return []
            if qvec is None:
                vectors = await self._embed([query])
                qvec = vectors[0] if vectors else None
            return await self.index.knn(qvec, scopes, CANDIDATES) if qvec is not None else []

        # bm25 first: queued on the database thread at once, it runs while this thread
        # embeds the query and searches the vectors.
        lexical, vector = await asyncio.gather(lexical_list(), vector_list(query_vector))
        bar = self.retrieval.search_similarity if min_similarity is None else min_similarity
        fused = fuse(lexical, vector, min_similarity=bar)
        # Weigh every fused item from a few columns; whole rows for the top `limit` only.
        weights = await self.store.weights([f.item_id for f in fused])
        now = self.store.clock()
        scored: list[tuple[float, Any]] = []
        for f in fused:
            row = weights.get(f.item_id)
            if row is None or (kinds and row[0] not in kinds):
                continue
            factor = self.weighting.factor(
                age_seconds=now - row[3], importance=row[1], pinned=bool(row[2])
            )
            scored.append((f.score * factor, f))
        scored.sort(key=lambda pair: pair[0], reverse=True)
        top = scored[:limit]
        records = await self.store.get_many([f.item_id for _, f in top])
        hits: list[MemoryHit] = []
        for score, f in top:
            record = records.get(f.item_id)
            if record is None:  # forgotten in between
                continue
            hits.append(
                MemoryHit(
                    origin="memory", text=record.content, score=score,
                    record=record, created_at=record.created_at,
                    similarity=f.similarity, lexical_rank=f.lexical_rank,
                )
            )
        return hits

    async def search(
        self, query: str, limit: int = 10, *, include_sessions: bool = True
    ) -> list[MemoryHit]:
        """Memories and past-session messages relevant to `query`, best first."""
        vectors = await self._embed([query]) if query.strip() else None
        qvec = vectors[0] if vectors else None
        hits = await self.search_memories(query, limit, query_vector=qvec)
        if include_sessions:
            hits += await self.sessions.search(
                query, self.project_root, limit, query_vector=qvec,
                exclude_session=self.session_id,
            )
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]

    async def search_sessions(self, query: str, limit: int = 20) -> list[MemoryHit]:
        """Past-session messages of this project (for `aistack sessions search`)."""
        await self.sessions.index_pending()
        vectors = await self._embed([query]) if query.strip() else None
        return await self.sessions.search(
            query, self.project_root, limit, query_vector=vectors[0] if vectors else None
        )

    # --- injection ---------------------------------------------------------------------------

    async def context_block(self, messages: list[Message], token_budget: int) -> str:
        """Profile and pinned facts, task state, the previous session's summary (on a
        conversation's first prompt), and the memories and past-session messages relevant
        to the latest user prompt, under `token_budget`; "" when there is nothing."""
        if token_budget <= 0:
            return ""
        wanted = self.retrieval.query_for(messages)
        key = (wanted[1].id if wanted else "", token_budget)
        if key in self._cache:
            return self._cache[key]
        sections: list[Section] = []
        always = await self.store.list([self.project, USER_SCOPE], ["profile"], limit=30)
        always += [
            r for r in await self.store.list([self.project, USER_SCOPE], pinned_only=True,
                                             limit=30)
            if r.kind != "profile"
        ]
        if always:
            sections.append(
                Section("profile", "Profile and pinned facts",
                        [f"- [{r.label}] {r.content}" for r in always])
            )
        task = await self.store.get_state(self.project, TASK_STATE_KEY)
        if task is not None and (
            self._task_state_set_here or self.store.clock() - task[2] < TASK_STATE_FRESH_SECONDS
        ):
            sections.append(Section("task", "Current task state", [task[0]]))
        summary = await self.store.get_state(self.project, SUMMARY_KEY)
        prompts = sum(1 for m in messages if m.role == "user" and m.text().strip())
        if summary is not None and summary[1] != self.session_id and prompts <= 1:
            sections.append(Section("summary", "Summary of the previous session", [summary[0]]))
        if wanted is not None:
            sections += await self._relevant(wanted[0], messages, {r.id for r in always})
        block = self.budget.render(sections, token_budget)
        result = f"{HEADER}\n\n{block}" if block else ""
        self._cache[key] = result
        return result

    async def _relevant(
        self, query: str, messages: list[Message], shown: set[int]
    ) -> list[Section]:
        vectors = await self._embed([query])
        qvec = vectors[0] if vectors else None
        limit = self.retrieval.max_memories
        bar = self.retrieval.min_similarity
        hits = [
            h for h in await self.search_memories(query, limit + len(shown), query_vector=qvec)
            if h.record is not None and h.record.id not in shown
            and (h.lexical_rank is not None or (h.similarity or 0.0) >= bar)
        ][:limit]
        sections: list[Section] = []
        if hits:
            sections.append(
                Section("relevant", "Relevant memories", [
                    f"- [{h.label} · {h.record.kind} · {h.record.when()}] {h.text}"
                    for h in hits if h.record is not None
                ])
            )
        past = await self.sessions.search(
            query, self.project_root, self.retrieval.max_session_hits, query_vector=qvec,
            exclude_session=self.session_id, exclude_messages=[m.id for m in messages],
        )
        if past:
            sections.append(
                Section("sessions", "From past sessions of this project", [
                    f"- [session {(h.session_id or '')[:8]} · {_day(h.created_at)} · {h.role}]"
                    f" {h.text}"
                    for h in past
                ])
            )
        return sections


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


__all__ = ["KINDS", "MemoryManager", "parse_memory_id"]
