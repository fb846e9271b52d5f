"""Memory tables in the per-user database (`$AISTACK_HOME/aistack.db`, namespace "memory").

- `memories`: one row per profile / semantic / episodic memory, with its provenance;
  an external-content FTS5 index (`memories_fts`, porter stemming) kept in step by
  triggers, and float vectors in `memory_vectors` (one per embedder) with a float
  `vec0` index per embedder (see `vectors.py`).
- `memory_state`: the single-text layers, task state and rolling summary, per project.
- `session_message_vectors`: vectors of past session messages (`session_search.py`).
- `vector_changes`: which items' vectors changed, for the in-process matrices (`matrix.py`).

Every write is one `BEGIN IMMEDIATE` transaction: the write lock is taken before the
duplicate check, so two processes writing the same fact merge it instead of racing, and
the busy timeout from `storage.db` makes a second writer wait rather than fail.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import aiosqlite

from aistack_tui.memory.models import (
    USER_SCOPE,
    Kind,
    MemoryNotFoundError,
    MemoryRecord,
)
from aistack_tui.memory.retrieval import fts_or_query
from aistack_tui.storage.db import (
    DB_ERRORS,
    Capabilities,
    Migration,
    immediate_transaction,
    migrate,
)

NAMESPACE = "memory"
CONTENT_MAX = 4000
DUPLICATE_COSINE = 0.92
DUPLICATE_JACCARD = 0.8
_WORDS = re.compile(r"\w+")
T = TypeVar("T")


# --- migrations -----------------------------------------------------------------------


async def _create_memories(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            norm TEXT NOT NULL,
            project TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL,
            session_id TEXT,
            message_id TEXT,
            importance REAL NOT NULL DEFAULT 0.5,
            pinned INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            times_seen INTEGER NOT NULL DEFAULT 1
        )"""
    )
    await db.execute("CREATE INDEX memories_by_scope ON memories(project, kind, updated_at)")
    await db.execute("CREATE INDEX memories_by_norm ON memories(norm)")


async def _create_memories_fts(db: aiosqlite.Connection) -> None:
    await db.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5("
        " content, content='memories', content_rowid='id',"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    await db.execute(
        "CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN"
        " INSERT INTO memories_fts(rowid, content) VALUES (new.id, new.content); END"
    )
    await db.execute(
        "CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN"
        " INSERT INTO memories_fts(memories_fts, rowid, content)"
        " VALUES ('delete', old.id, old.content); END"
    )
    await db.execute(
        "CREATE TRIGGER memories_au AFTER UPDATE OF content ON memories BEGIN"
        " INSERT INTO memories_fts(memories_fts, rowid, content)"
        " VALUES ('delete', old.id, old.content);"
        " INSERT INTO memories_fts(rowid, content) VALUES (new.id, new.content); END"
    )


async def _create_vectors_and_state(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE memory_vectors (
            item_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            embedder TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (item_id, embedder)
        )"""
    )
    await db.execute(
        """CREATE TABLE memory_state (
            project TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            session_id TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (project, key)
        )"""
    )
    # Keyed by session_messages.rowid; no foreign key, because the sessions tables belong
    # to another migration namespace. Vectors of deleted messages are skipped by joins.
    await db.execute(
        """CREATE TABLE session_message_vectors (
            item_id INTEGER NOT NULL,
            embedder TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (item_id, embedder)
        )"""
    )


async def _create_vector_changes(db: aiosqlite.Connection) -> None:
    """A log of which items' vectors changed, filled by triggers, so the in-process
    matrices of every process (`matrix.py`) can follow writes they did not make.

    `tbl` is the vector table's prefix ("memory", "session_message"). AUTOINCREMENT keeps
    `seq` growing in commit order (writers are serialised), never reusing a pruned value.
    """
    await db.execute(
        "CREATE TABLE vector_changes ("
        " seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, item_id INTEGER NOT NULL)"
    )
    for prefix in ("memory", "session_message"):
        for event, row in (("INSERT", "new"), ("DELETE", "old"), ("UPDATE", "new")):
            await db.execute(
                f"CREATE TRIGGER {prefix}_vectors_log_{event.lower()} AFTER {event}"
                f" ON {prefix}_vectors BEGIN INSERT INTO vector_changes(tbl, item_id)"
                f" VALUES ('{prefix}', {row}.item_id); END"
            )


MIGRATIONS: Sequence[Migration] = (
    _create_memories,
    _create_memories_fts,
    _create_vectors_and_state,
    _create_vector_changes,
)


# --- helpers --------------------------------------------------------------------------


def normalise(text: str) -> str:
    """Lower-cased words only: what exact-duplicate detection compares."""
    return " ".join(_WORDS.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    wa, wb = set(_WORDS.findall(a.lower())), set(_WORDS.findall(b.lower()))
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def restates(a: str, b: str) -> bool:
    """One text contains all the words of the other (at least 4 of them) and adds few:
    "we deploy with fly.io" → "we deploy with fly.io for every service"."""
    wa, wb = set(_WORDS.findall(a.lower())), set(_WORDS.findall(b.lower()))
    small = min(len(wa), len(wb))
    return small >= 4 and len(wa & wb) == small and len(wa & wb) / len(wa | wb) >= 0.6


def clean_content(text: str) -> str:
    content = " ".join(text.split()) if "\n" not in text.strip() else text.strip()
    if not content:
        raise ValueError("a memory needs some text")
    if len(content) > CONTENT_MAX:
        content = content[: CONTENT_MAX - 1].rstrip() + "…"
    return content


def _record(row: aiosqlite.Row, embedder: str | None = None) -> MemoryRecord:
    return MemoryRecord(
        id=int(row["id"]),
        kind=row["kind"],
        content=row["content"],
        project=row["project"],
        source=row["source"],
        session_id=row["session_id"],
        message_id=row["message_id"],
        importance=float(row["importance"]),
        pinned=bool(row["pinned"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        times_seen=int(row["times_seen"]),
        embedder=embedder,
    )


# --- the store ------------------------------------------------------------------------


class MemoryStore:
    """Rows, full-text search and state on one aiosqlite connection.

    Vectors are handled by `VectorIndex` on the same connection; the manager embeds
    outside transactions and hands the vectors in.
    """

    def __init__(
        self,
        db: aiosqlite.Connection,
        capabilities: Capabilities,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self.capabilities = capabilities
        self.clock = clock

    async def write(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` inside BEGIN IMMEDIATE … COMMIT (serialised within this process)."""
        return await immediate_transaction(self.db, work, what="the memory database")

    # Rows ------------------------------------------------------------------------------

    async def find_duplicate(
        self,
        content: str,
        kind: Kind,
        project: str,
        *,
        similarity: Callable[[list[int]], Awaitable[dict[int, float]]] | None = None,
    ) -> MemoryRecord | None:
        """An existing memory saying the same thing (same scope and kind), if any.

        Exact after normalisation, or a near-duplicate: among the bm25 candidates, word
        Jaccard ≥ 0.8, a restatement that only adds a few words, or vector cosine ≥ 0.92.
        The bars are high on purpose: "always use pnpm" and "always use npm" must stay
        two memories.
        """
        norm = normalise(content)
        cur = await self.db.execute(
            "SELECT * FROM memories WHERE norm = ? AND project = ? AND kind = ? LIMIT 1",
            (norm, project, kind),
        )
        row = await cur.fetchone()
        if row is not None:
            return _record(row)
        candidates = await self.lexical(content, [project], [kind], limit=8)
        if not candidates:
            return None
        rows = await self.get_many(candidates)
        sims = await similarity(candidates) if similarity is not None else {}
        for item in candidates:
            rec = rows.get(item)
            if rec is None:
                continue
            if jaccard(rec.content, content) >= DUPLICATE_JACCARD or restates(rec.content, content):
                return rec
            if sims.get(item, 0.0) >= DUPLICATE_COSINE and jaccard(rec.content, content) >= 0.5:
                return rec
        return None

    async def insert(
        self,
        content: str,
        kind: Kind,
        project: str,
        *,
        source: str,
        session_id: str | None,
        message_id: str | None,
        importance: float,
        pinned: bool,
        created_at: float | None = None,
        times_seen: int = 1,
    ) -> MemoryRecord:
        now = self.clock()
        cur = await self.db.execute(
            "INSERT INTO memories(kind, content, norm, project, source, session_id, message_id,"
            " importance, pinned, created_at, updated_at, times_seen)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                kind,
                content,
                normalise(content),
                project,
                source,
                session_id,
                message_id,
                min(max(importance, 0.0), 1.0),
                int(pinned),
                created_at if created_at is not None else now,
                now,
                times_seen,
            ),
        )
        item_id = cur.lastrowid
        assert item_id is not None
        return await self.get(item_id)

    async def merge_into(
        self, existing: MemoryRecord, content: str, importance: float, pinned: bool
    ) -> MemoryRecord:
        """Fold a re-statement into `existing`: the longer wording wins, importance and
        pinning only go up, `times_seen` counts the repetitions."""
        new_content = content if len(content) > len(existing.content) else existing.content
        await self.db.execute(
            "UPDATE memories SET content = ?, norm = ?, importance = MAX(importance, ?),"
            " pinned = MAX(pinned, ?), updated_at = ?, times_seen = times_seen + 1"
            " WHERE id = ?",
            (
                new_content,
                normalise(new_content),
                min(max(importance, 0.0), 1.0),
                int(pinned),
                self.clock(),
                existing.id,
            ),
        )
        return await self.get(existing.id)

    async def get(self, item_id: int) -> MemoryRecord:
        cur = await self.db.execute("SELECT * FROM memories WHERE id = ?", (item_id,))
        row = await cur.fetchone()
        if row is None:
            raise MemoryNotFoundError(f"no memory with id m{item_id}")
        return _record(row)

    async def get_many(self, ids: Sequence[int]) -> dict[int, MemoryRecord]:
        found: dict[int, MemoryRecord] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in await self.db.execute_fetchall(
                f"SELECT * FROM memories WHERE id IN ({marks})", chunk
            ):
                found[int(row["id"])] = _record(row)
        return found

    async def weights(self, ids: Sequence[int]) -> dict[int, tuple[str, float, int, float]]:
        """`id -> (kind, importance, pinned, updated_at)`: what ranking needs, no text."""
        found: dict[int, tuple[str, float, int, float]] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in await self.db.execute_fetchall(
                "SELECT id, kind, importance, pinned, updated_at FROM memories"
                f" WHERE id IN ({marks})", chunk
            ):
                found[int(row[0])] = (str(row[1]), float(row[2]), int(row[3]), float(row[4]))
        return found

    async def list(
        self,
        projects: Sequence[str],
        kinds: Sequence[str] = (),
        *,
        pinned_only: bool = False,
        limit: int = 100,
    ) -> list[MemoryRecord]:
        """Newest first, within the given scopes (a project and/or "" for user-wide)."""
        sql = f"SELECT * FROM memories WHERE project IN ({','.join('?' * len(projects))})"
        params: list[Any] = list(projects)
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        if pinned_only:
            sql += " AND pinned = 1"
        sql += " ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ?"
        params.append(max(0, limit))
        cur = await self.db.execute(sql, params)
        return [_record(row) for row in await cur.fetchall()]

    async def update_content(self, item_id: int, content: str) -> None:
        cur = await self.db.execute(
            "UPDATE memories SET content = ?, norm = ?, updated_at = ?, source = source"
            " WHERE id = ?",
            (content, normalise(content), self.clock(), item_id),
        )
        if cur.rowcount == 0:
            raise MemoryNotFoundError(f"no memory with id m{item_id}")

    async def set_pinned(self, item_id: int, pinned: bool) -> None:
        cur = await self.db.execute(
            "UPDATE memories SET pinned = ? WHERE id = ?", (int(pinned), item_id)
        )
        if cur.rowcount == 0:
            raise MemoryNotFoundError(f"no memory with id m{item_id}")

    async def delete(self, item_id: int) -> None:
        cur = await self.db.execute("DELETE FROM memories WHERE id = ?", (item_id,))
        if cur.rowcount == 0:
            raise MemoryNotFoundError(f"no memory with id m{item_id}")

    async def count(self) -> int:
        cur = await self.db.execute("SELECT COUNT(*) FROM memories")
        return int((await cur.fetchone() or (0,))[0])

    # Search ----------------------------------------------------------------------------

    async def lexical(
        self,
        text: str,
        projects: Sequence[str],
        kinds: Sequence[str] = (),
        *,
        limit: int = 50,
    ) -> list[int]:
        """bm25 ranking of memories matching any content word of `text`, best first."""
        match = fts_or_query(text)
        if not match or limit <= 0 or not projects:
            return []
        # Rank inside FTS5 first (its `rank` ordering is the fast path) over an
        # oversampled top, then filter by scope: sorting every match after a join is what
        # made a four-word OR query cost ~15 ms at 10k rows.
        sql = (
            "SELECT m.id FROM (SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ?"
            " ORDER BY rank LIMIT ?) AS f JOIN memories AS m ON m.id = f.rowid"
            f" WHERE m.project IN ({','.join('?' * len(projects))})"
        )
        params: list[Any] = [match, limit * 4, *projects]
        if kinds:
            sql += f" AND m.kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        sql += " ORDER BY f.rank LIMIT ?"
        params.append(limit)
        try:
            rows = await self.db.execute_fetchall(sql, params)
        except DB_ERRORS:  # pragma: no cover - the query is always quoted
            return []
        return [int(row[0]) for row in rows]

    async def missing_vectors(self, embedder: str, limit: int) -> list[tuple[int, str, str]]:
        """Memories without a vector from `embedder`: `(id, content, project)`."""
        cur = await self.db.execute(
            "SELECT m.id, m.content, m.project FROM memories AS m WHERE NOT EXISTS ("
            " SELECT 1 FROM memory_vectors AS v WHERE v.item_id = m.id AND v.embedder = ?)"
            " ORDER BY m.id LIMIT ?",
            (embedder, limit),
        )
        return [(int(r[0]), r[1], r[2]) for r in await cur.fetchall()]

    async def drop_other_vectors(self, embedder: str) -> None:
        """Once everything is re-embedded, vectors of earlier embedders are dead weight."""
        await self.db.execute("DELETE FROM memory_vectors WHERE embedder <> ?", (embedder,))

    # Single-text layers ----------------------------------------------------------------

    async def set_state(
        self, project: str, key: str, value: str, session_id: str | None
    ) -> None:
        if value.strip():
            await self.db.execute(
                "INSERT INTO memory_state(project, key, value, session_id, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(project, key) DO UPDATE SET"
                " value = excluded.value, session_id = excluded.session_id,"
                " updated_at = excluded.updated_at",
                (project, key, value.strip(), session_id, self.clock()),
            )
        else:
            await self.db.execute(
                "DELETE FROM memory_state WHERE project = ? AND key = ?", (project, key)
            )

    async def get_state(self, project: str, key: str) -> tuple[str, str | None, float] | None:
        """`(value, session_id, updated_at)` or None."""
        cur = await self.db.execute(
            "SELECT value, session_id, updated_at FROM memory_state"
            " WHERE project = ? AND key = ?",
            (project, key),
        )
        row = await cur.fetchone()
        return (row[0], row[1], float(row[2])) if row is not None else None


def user_and_project(project: str) -> list[str]:
    """The scopes a project can see: its own memories and the user-wide ones."""
    return [project, USER_SCOPE] if project != USER_SCOPE else [USER_SCOPE]


async def migrate_pending(
    db: Any, migrations: Sequence[Migration], namespace: str
) -> None:
    """Run `migrate` only when a step is pending.

    Works around `storage.db.migrate` on sqlean: its "already applied" path leaves the
    version cursor half-read and rolls back, and on the third such step sqlean fails with
    "Error binding parameter 0". Skipping the call when nothing is pending avoids that
    path on every re-open (a fresh database never takes it).
    """
    cur = await db.execute(
        "SELECT name FROM sqlite_master WHERE name = 'schema_migrations'"
    )
    if (await cur.fetchall()) != []:
        cur = await db.execute(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE namespace = ?",
            (namespace,),
        )
        rows = list(await cur.fetchall())
        if rows and int(rows[0][0]) >= len(migrations):
            return
    await migrate(db, migrations, namespace=namespace)
