"""Search over past sessions: the sessions store's FTS5 index fused with vectors.

The sessions store (`sessions/sqlite_store.py`) already keeps every message's searchable
text and an FTS5 index over it in the same database. This module adds a vector for each
user and assistant message (tool results are skipped: they are file contents and command
output, noise when looking for "the time we fixed the flaky upload test") and fuses the
two rankings with RRF, the same way memories are searched. Messages are embedded in the
background, in batches, in the order they were written; until a message has a vector it
is still found by its words.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aistack_tui.memory.models import MemoryHit
from aistack_tui.memory.retrieval import Weighting, fts_or_query, fuse
from aistack_tui.memory.store import MemoryStore
from aistack_tui.memory.vectors import VectorIndex
from aistack_tui.storage.embeddings import Embedder

INDEX_TEXT_MAX = 2000
SNIPPET_MAX = 400
_NOT_TOOL_RESULT = "m.data NOT LIKE '%\"type\":\"tool_result\"%'"
PARTITION_SQL = (
    "SELECT m.rowid AS item_id, s.project_root AS part"
    " FROM session_messages AS m JOIN sessions AS s ON s.id = m.session_id"
)


def project_key(project_root: Path) -> str:
    """The same key the sessions store uses for a project (its resolved root)."""
    return str(project_root.expanduser().resolve())


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_MAX else flat[: SNIPPET_MAX - 1].rstrip() + "…"


class SessionSearch:
    """Hybrid search over the messages of past sessions."""

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        *,
        min_similarity: float,
        weighting: Weighting | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.min_similarity = min_similarity
        self.weighting = weighting or Weighting(half_life_days=60.0, importance_weight=0.0)
        self.clock = clock
        self.index = VectorIndex(
            store.db,
            prefix="session_message",
            embedder_name=embedder.name,
            dim=embedder.dim,
            vec_enabled=store.capabilities.vec,
        )

    async def ensure_index(self) -> None:
        await self.store.write(lambda: self.index.ensure(PARTITION_SQL))

    async def index_pending(self, batch: int = 64, max_batches: int | None = None) -> int:
        """Embed messages that have no vector from the current embedder; returns how many."""
        done = 0
        rounds = 0
        while max_batches is None or rounds < max_batches:
            rounds += 1
            cur = await self.store.db.execute(
                "SELECT m.rowid, m.text, s.project_root FROM session_messages AS m"
                " JOIN sessions AS s ON s.id = m.session_id"
                f" WHERE m.text <> '' AND {_NOT_TOOL_RESULT} AND NOT EXISTS ("
                "  SELECT 1 FROM session_message_vectors AS v"
                "  WHERE v.item_id = m.rowid AND v.embedder = ?)"
                " ORDER BY m.rowid LIMIT ?",
                (self.embedder.name, batch),
            )
            rows = [(int(r[0]), str(r[1]), str(r[2])) for r in await cur.fetchall()]
            if not rows:
                break
            vectors = await self.embedder.embed([text[:INDEX_TEXT_MAX] for _, text, _ in rows])

            async def work(
                rows: list[tuple[int, str, str]] = rows, vectors: list[list[float]] = vectors
            ) -> None:
                for (item_id, _, project), vector in zip(rows, vectors, strict=True):
                    await self.index.upsert(item_id, project, vector)

            await self.store.write(work)
            done += len(rows)
        return done

    async def search(
        self,
        query: str,
        project_root: Path | None,
        limit: int = 10,
        *,
        query_vector: Sequence[float] | None = None,
        exclude_session: str | None = None,
        exclude_messages: Sequence[str] = (),
    ) -> list[MemoryHit]:
        """Past messages of this project (all projects when None) relevant to `query`."""
        if limit <= 0:
            return []
        project = project_key(project_root) if project_root is not None else None

        async def vector_list() -> list[tuple[int, float]]:
            if query_vector is None:
                return []
            if project is not None:
                return await self.index.knn(query_vector, [project], 50)
            return await self._knn_all_projects(query_vector)

        vector, lexical = await asyncio.gather(
            vector_list(), self._lexical(query, project, limit=50)
        )
        fused = fuse(lexical, vector, min_similarity=self.min_similarity)
        if not fused:
            return []
        rows = await self._rows([f.item_id for f in fused])
        skip = set(exclude_messages)
        now = self.clock()
        hits: list[MemoryHit] = []
        for f in fused:
            row = rows.get(f.item_id)
            if row is None or row["message_id"] in skip or row["session_id"] == exclude_session:
                continue
            factor = self.weighting.factor(
                age_seconds=now - float(row["created_at"]), importance=1.0, pinned=False
            )
            hits.append(
                MemoryHit(
                    origin="session",
                    text=_snippet(row["text"]),
                    score=f.score * factor,
                    session_id=row["session_id"],
                    message_id=row["message_id"],
                    role=row["role"],
                    created_at=float(row["created_at"]),
                    session_title=row["title"],
                    similarity=f.similarity,
                    lexical_rank=f.lexical_rank,
                )
            )
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]

    async def _lexical(self, query: str, project: str | None, limit: int) -> list[int]:
        match = fts_or_query(query)
        if not match:
            return []
        sql = (
            "SELECT m.rowid FROM session_messages_fts"
            " JOIN session_messages AS m ON m.rowid = session_messages_fts.rowid"
            " JOIN sessions AS s ON s.id = m.session_id"
            f" WHERE session_messages_fts MATCH ? AND {_NOT_TOOL_RESULT}"
        )
        params: list[Any] = [match]
        if project is not None:
            sql += " AND s.project_root = ?"
            params.append(project)
        sql += " ORDER BY bm25(session_messages_fts) LIMIT ?"
        params.append(limit)
        cur = await self.store.db.execute(sql, params)
        return [int(r[0]) for r in await cur.fetchall()]

    async def _knn_all_projects(self, query_vector: Sequence[float]) -> list[tuple[int, float]]:
        cur = await self.store.db.execute("SELECT DISTINCT project_root FROM sessions")
        projects = [str(r[0]) for r in await cur.fetchall()]
        return await self.index.knn(query_vector, projects, 50)

    async def _rows(self, ids: list[int]) -> dict[int, Any]:
        marks = ",".join("?" * len(ids))
        cur = await self.store.db.execute(
            "SELECT m.rowid AS rid, m.session_id, m.message_id, m.role, m.created_at, m.text,"
            " s.title FROM session_messages AS m JOIN sessions AS s ON s.id = m.session_id"
            f" WHERE m.rowid IN ({marks})",
            ids,
        )
        return {int(r["rid"]): r for r in await cur.fetchall()}
