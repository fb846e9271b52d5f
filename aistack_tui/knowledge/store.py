"""The per-project index database: files, symbols, references, chunks, FTS5 and vectors.

One SQLite file per project (`$AISTACK_HOME/projects/<slug>/index.db`). Chunks are
indexed twice: in a contentless FTS5 table (path, symbol, identifier sub-words, body; the
porter stemmer lets "parsing" find `parse`) and, when sqlite-vec loaded, in a `vec0`
table keyed by the chunk id, which large indexes also keep in RAM for search
(`vector_cache.py`; every write here reports its chunk ids to it after committing). The
chunk text itself lives once, in `chunks`. Row ids are
allocated here rather than by SQLite so a whole batch can go in with `executemany`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from aistack_tui.knowledge.types import DefinitionRow, FileExtraction, PackedExtraction
from aistack_tui.knowledge.vector_cache import ChunkVectors
from aistack_tui.storage.db import (
    Capabilities,
    immediate_transaction,
    open_database,
    write_lock,
)

T = TypeVar("T")
_WHAT = "the code index"
EMBED_TEXT_CHARS = 1500
QUANTIZE = "vec_quantize_int8(?, 'unit')"
"""Vectors are stored as int8 (scaled from the unit float vectors the embedders return):
a quarter of the space and about half the brute-force KNN time of float32, with the
same nearest neighbours in practice for L2-normalised vectors."""


def embed_text(path: str, symbol: str, text: str) -> str:
    """What a chunk's vector is computed from: where it is, what it is, how it starts."""
    return f"{path} {symbol}\n{text}"[:EMBED_TEXT_CHARS]


async def _schema_v1(db: aiosqlite.Connection) -> None:
    statements = [
        """CREATE TABLE files (
            id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, language TEXT NOT NULL,
            size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL,
            lines INTEGER NOT NULL DEFAULT 0)""",
        """CREATE TABLE symbols (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            name TEXT NOT NULL, qualname TEXT NOT NULL, kind TEXT NOT NULL,
            start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
            signature TEXT NOT NULL DEFAULT '', doc TEXT NOT NULL DEFAULT '')""",
        "CREATE INDEX symbols_file ON symbols(file_id)",
        "CREATE INDEX symbols_name ON symbols(name COLLATE NOCASE)",
        """CREATE TABLE refs (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            name TEXT NOT NULL, count INTEGER NOT NULL)""",
        "CREATE INDEX refs_file ON refs(file_id)",
        """CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
            symbol TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
            embedded INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX chunks_file ON chunks(file_id)",
        "CREATE INDEX chunks_pending ON chunks(id) WHERE embedded = 0",
        """CREATE VIRTUAL TABLE chunks_fts USING fts5(
            path, symbol, idents, body,
            content='', contentless_delete=1, tokenize='porter unicode61')""",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ]
    for statement in statements:
        await db.execute(statement)


async def _schema_v2(db: aiosqlite.Connection) -> None:
    """Files whose references a big build left for its second pass (see `write`); the
    pass also fills in their definitions' signatures and docs (`store_references`)."""
    await db.execute(
        "ALTER TABLE files ADD COLUMN refs_pending INTEGER NOT NULL DEFAULT 0"
    )
    await db.execute("CREATE INDEX files_refs_pending ON files(id) WHERE refs_pending = 1")


MIGRATIONS = [_schema_v1, _schema_v2]
_CHUNK_HIGH = "chunk_id_high"
"""The `meta` key of the highest chunk id ever handed out."""
AUTOMERGE = 4
"""FTS5's default: how many segments of a level it merges into one (see `bulk_mode`)."""
CRISIS_MERGE = 16
"""FTS5's default: a level holding this many segments is merged at once, whatever
`automerge` says (see `bulk_mode`)."""
NO_CRISIS_MERGE = 1999
"""The largest `crisismerge` FTS5 accepts (it keeps at most 2,000 segments)."""
PAGE_SIZE = 16384
"""Of a new index file: a first build of 10k files wrote 8% less CPU than with 4 KB
pages (chunk texts span fewer overflow pages, full-text segments fewer b-tree pages)."""
MERGE_STEP_PAGES = 256
"""Pages one step of `merge_segments` writes (about 1 MB: a few ms under the write lock)."""


_INSERT_SYMBOL = (
    "INSERT INTO symbols(file_id, name, qualname, kind, start_line, end_line, signature, doc)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _symbol_row(file_id: int, d: DefinitionRow) -> tuple[object, ...]:
    # (name, qualname, kind, start_line, end_line, signature, doc): `chunk_start` is not stored.
    return (file_id, *d[:7])


@dataclass(frozen=True, slots=True)
class FileState:
    id: int
    size: int
    mtime_ns: int
    hash: str


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """A file a worker read: its stat data, content hash and (when re-parsed) contents."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    extraction: FileExtraction | PackedExtraction
    """A `PackedExtraction` when it came from a worker process."""

    def __reduce__(self) -> tuple[Any, ...]:
        # A plain tuple crosses the process boundary in a third of the time the
        # default reduction of a slotted dataclass takes (one per file parsed).
        return (ParsedFile, (self.path, self.size, self.mtime_ns, self.hash, self.extraction))


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    text: str


class IndexStore:
    """Async access to one project's index database."""

    def __init__(self, db: aiosqlite.Connection, caps: Capabilities) -> None:
        self.db = db
        self.caps = caps
        self.vec_dim = 0
        self.reader: aiosqlite.Connection | None = None
        self.vector_cache: ChunkVectors | None = None
        """The in-memory copy of `chunk_vec`, once `ensure_vectors` ran (vec loaded)."""
        self._next_file_id = 1
        self._next_chunk_id = 1

    @classmethod
    async def open(cls, path: Path) -> IndexStore:
        db, caps = await open_database(
            path, MIGRATIONS, namespace="knowledge", page_size=PAGE_SIZE
        )
        store = cls(db, caps)
        if caps.vec:
            # A second connection for vector KNN, so the brute-force scan runs in
            # parallel with the FTS and symbol queries of the same search (WAL lets
            # readers proceed alongside the writer).
            store.reader, _ = await open_database(path, MIGRATIONS, namespace="knowledge")
        store._next_file_id = await store._scalar("SELECT COALESCE(MAX(id), 0) FROM files") + 1
        store._next_chunk_id = await store._scalar("SELECT COALESCE(MAX(id), 0) FROM chunks") + 1
        return store

    async def close(self) -> None:
        if self.vector_cache is not None:
            await self.vector_cache.close()
        if self.reader is not None:
            await self.reader.close()
        await self.db.close()

    async def _scalar(self, sql: str, params: Sequence[object] = ()) -> int:
        cursor = await self.db.execute(sql, params)
        row = await cursor.fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    async def get_meta(self, key: str) -> str | None:
        cursor = await self.db.execute("SELECT value FROM meta WHERE key = ?", (key,))
        row = await cursor.fetchone()
        return str(row[0]) if row else None

    async def set_meta(self, key: str, value: str) -> None:
        await self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
        await self.db.commit()

    async def ensure_vectors(self, embedder_name: str, dim: int) -> bool:
        """Create the vector table for this embedder; re-embed everything if it changed.

        Vectors of different embedders are not comparable, so a switch drops them all
        and marks every chunk pending; the background refresh re-embeds them.
        """
        if not self.caps.vec:
            return False
        current = await self.get_meta("embedder")
        wanted = f"{embedder_name}:{dim}:int8"
        if current != wanted:
            await self.db.execute("DROP TABLE IF EXISTS chunk_vec")
            await self.db.execute("UPDATE chunks SET embedded = 0")
            await self.db.commit()
        await self.db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vec USING vec0(embedding int8[{int(dim)}])"
        )
        await self.set_meta("embedder", wanted)
        self.vec_dim = dim
        if self.vector_cache is not None:
            await self.vector_cache.close()
        self.vector_cache = None
        if self.reader is not None:
            # Both counts use indexes (the pending one is partial): no scan of the texts.
            total = await self._scalar("SELECT COUNT(*) FROM chunks")
            embedded = total - await self.pending_count()
            self.vector_cache = ChunkVectors(self.db, self.reader, dim, rows_hint=embedded)
        return True

    def _note_vectors(self, added: Iterable[int], removed: Iterable[int]) -> None:
        """Tell the in-memory vectors what a just-committed transaction changed."""
        if self.vector_cache is not None:
            self.vector_cache.note_changes(added, removed)

    async def bulk_mode(self, enabled: bool) -> None:
        """Trade durability for speed while a big batch (a first index) is written.

        With `synchronous=OFF` SQLite skips the fsyncs of WAL checkpoints, which halves
        the write time of a full build. An application crash still cannot corrupt the
        file; an OS crash in the middle could, and then the index is simply rebuilt
        (it is a cache of the tree). A larger page cache keeps the FTS and index b-trees
        in memory meanwhile.

        FTS5 merges a level's segments once it holds `automerge` of them (4 by default),
        and at once when it holds `crisismerge` (16). A build commits one segment per
        write group, and merging them meanwhile rewrote the same postings level after
        level: a quarter of the full-text index's CPU during a build, spent before the
        index was searchable, for searches that took the same time over 41 segments as
        over one. So a big build writes with no merging at all, and `merge_segments`
        merges afterwards, in the background. `automerge` comes back as the build's
        writes end (later edits merge a little at each write, never the whole level);
        `crisismerge` stays off until `merge_segments` is done.
        """
        # Under the write lock: `synchronous` cannot change inside another task's transaction.
        async with write_lock(self.db):
            if enabled:
                await self.db.execute("PRAGMA synchronous=OFF")
                await self.db.execute("PRAGMA cache_size=-65536")
            else:
                await self.db.execute("PRAGMA synchronous=NORMAL")
                await self.db.execute("PRAGMA cache_size=-2000")

        async def work() -> None:
            await self._fts_setting("automerge", 0 if enabled else AUTOMERGE)
            if enabled:
                await self._fts_setting("crisismerge", NO_CRISIS_MERGE)

        await self._transaction(work)

    async def _fts_setting(self, name: str, value: int) -> None:
        await self.db.execute(
            "INSERT INTO chunks_fts(chunks_fts, rank) VALUES (?, ?)", (name, value)
        )

    async def merge_owed(self) -> bool:
        """Whether a big build's segments still wait for `merge_segments` (its flag, the
        raised `crisismerge`, is stored: a session that ended first, even inside the
        build, leaves it to the next)."""
        rows = await self.db.execute_fetchall(
            "SELECT v FROM chunks_fts_config WHERE k = 'crisismerge'"
        )
        return any(int(row[0]) == NO_CRISIS_MERGE for row in rows)

    async def merge_segments(self, closed: Callable[[], bool]) -> bool:
        """Merge the full-text segments a big build left (see `bulk_mode`), a few pages
        per transaction, so an edit's write waits at most one step; then restore
        `automerge` and `crisismerge`. Returns whether it finished (it stops early once
        `closed()`)."""

        async def step() -> int:
            before = await self._scalar("SELECT total_changes()")
            await self._fts_setting("merge", MERGE_STEP_PAGES)
            return await self._scalar("SELECT total_changes()") - before

        async def restore() -> None:
            # `automerge` too: a session that ended inside a big build left it at 0.
            await self._fts_setting("automerge", AUTOMERGE)
            await self._fts_setting("crisismerge", CRISIS_MERGE)

        # FTS5's rule: a step that changes fewer than two rows found nothing to merge.
        while await self._transaction(step) >= 2:
            if closed():
                return False
        await self._transaction(restore)
        return True

    async def file_states(self, paths: Sequence[str] | None = None) -> dict[str, FileState]:
        """Stored stat data and hashes: of every file, or only of `paths`."""
        sql = "SELECT id, path, size, mtime_ns, hash FROM files"
        rows: list[Any] = []
        if paths is None:
            rows = list(await self.db.execute_fetchall(sql))
        else:
            for start in range(0, len(paths), 500):
                part = list(paths[start : start + 500])
                marks = ",".join("?" * len(part))
                rows.extend(await self.db.execute_fetchall(f"{sql} WHERE path IN ({marks})", part))
        return {str(r[1]): FileState(int(r[0]), int(r[2]), int(r[3]), str(r[4])) for r in rows}

    async def _delete_children(self, file_ids: Sequence[int]) -> list[int]:
        """Delete these files' chunks, symbols and references; returns the chunk ids."""
        deleted: list[int] = []
        for start in range(0, len(file_ids), 500):
            part = list(file_ids[start : start + 500])
            marks = ",".join("?" * len(part))
            cursor = await self.db.execute(
                f"SELECT id FROM chunks WHERE file_id IN ({marks})", part
            )
            chunk_ids = [(int(r[0]),) for r in await cursor.fetchall()]
            deleted.extend(r[0] for r in chunk_ids)
            await self.db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", chunk_ids)
            if self.vec_dim:
                await self.db.executemany("DELETE FROM chunk_vec WHERE rowid = ?", chunk_ids)
            for table in ("chunks", "symbols", "refs"):
                await self.db.execute(f"DELETE FROM {table} WHERE file_id IN ({marks})", part)
        return deleted

    async def write(
        self,
        parsed: Sequence[ParsedFile],
        states: dict[str, FileState],
        vectors: Sequence[Sequence[bytes]] = (),
    ) -> None:
        """Replace the stored contents of these files in one transaction.

        `vectors`, when given, holds one embedding per chunk of each file (computed by
        the parse workers); otherwise the chunks stay pending for `pending_embeddings`.
        `states` is refreshed for these paths inside the transaction.
        """
        added, deleted = await self._transaction(
            lambda: self._write_rows(parsed, states, vectors)
        )
        self._note_vectors(added, deleted)

    async def _transaction(self, work: Callable[[], Awaitable[T]]) -> T:
        """`work` in one BEGIN IMMEDIATE transaction, one at a time on this connection.

        The embedding loop stores vectors while a targeted update may write files: both
        share this connection, so they must not interleave inside one transaction.
        """
        return await immediate_transaction(self.db, work, what=_WHAT)

    async def _sync_ids(self) -> None:
        """Re-read where the ids stand (inside the write transaction).

        Ids are allocated here, not by SQLite (so a batch goes in with `executemany`).
        Another process indexing the same project (the TUI's watcher and `aistack index`)
        may have written since this store last looked: under SQLite's write lock the
        maxima are current, and no two writers can hand out the same id.
        """
        rows = await self.db.execute_fetchall(
            "SELECT (SELECT COALESCE(MAX(id), 0) FROM files),"
            " (SELECT COALESCE(MAX(id), 0) FROM chunks),"
            " (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key = ?)",
            (_CHUNK_HIGH,),
        )
        row = next(iter(rows))
        self._next_file_id = max(self._next_file_id, int(row[0]) + 1)
        self._next_chunk_id = max(self._next_chunk_id, int(row[1]) + 1, int(row[2]) + 1)

    async def _save_chunk_high(self) -> None:
        """Record the highest chunk id handed out (inside the write transaction).

        `MAX(id)` alone would hand a deleted top chunk's id out again, and another
        process embedding that chunk's old text meanwhile would attach its vector to the
        new chunk. Ids recorded here are never reused."""
        await self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (_CHUNK_HIGH, str(self._next_chunk_id - 1)),
        )

    async def _write_rows(
        self,
        parsed: Sequence[ParsedFile],
        states: dict[str, FileState],
        vectors: Sequence[Sequence[bytes]],
    ) -> tuple[list[int], list[int]]:
        """The inserts of `write`, inside its transaction: (chunk ids with a vector, chunk
        ids deleted)."""
        await self._sync_ids()
        # What another writer stored for these paths meanwhile counts, not the caller's
        # older view (a file it added would otherwise be inserted twice).
        fresh = await self.file_states([p.path for p in parsed])
        for item in parsed:
            if item.path in fresh:
                states[item.path] = fresh[item.path]
            else:
                states.pop(item.path, None)
        existing = [fresh[p.path].id for p in parsed if p.path in fresh]
        deleted = await self._delete_children(existing)
        file_rows: list[tuple[object, ...]] = []
        symbol_rows: list[tuple[object, ...]] = []
        ref_rows: list[tuple[object, ...]] = []
        chunk_rows: list[tuple[object, ...]] = []
        fts_rows: list[tuple[object, ...]] = []
        vec_rows: list[tuple[int, bytes]] = []
        for index, item in enumerate(parsed):
            file_vectors = vectors[index] if index < len(vectors) and self.vec_dim else ()
            state = states.get(item.path)
            if state is None:
                file_id = self._next_file_id
                self._next_file_id += 1
            else:
                file_id = state.id
            ex = item.extraction
            file_rows.append(
                (file_id, item.path, ex.language, item.size, item.mtime_ns, item.hash,
                 ex.line_count, int(ex.references_pending))
            )  # fmt: skip
            symbol_rows.extend(_symbol_row(file_id, d) for d in ex.definition_rows())
            ref_rows.extend((file_id, name, count) for name, count in ex.references)
            chunks = ex.chunk_rows()
            embedded = int(len(file_vectors) == len(chunks) and bool(file_vectors))
            for position, (start, end, symbol, kind, text, idents) in enumerate(chunks):
                chunk_id = self._next_chunk_id
                self._next_chunk_id += 1
                chunk_rows.append((chunk_id, file_id, start, end, symbol, kind, text, embedded))
                if embedded:
                    vec_rows.append((chunk_id, file_vectors[position]))
                fts_rows.append((chunk_id, item.path, symbol, idents, text))
        await self.db.executemany(
            "INSERT INTO files(id, path, language, size, mtime_ns, hash, lines, refs_pending)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
            " language = excluded.language, size = excluded.size,"
            " mtime_ns = excluded.mtime_ns, hash = excluded.hash, lines = excluded.lines,"
            " refs_pending = excluded.refs_pending",
            file_rows,
        )
        await self.db.executemany(_INSERT_SYMBOL, symbol_rows)
        await self.db.executemany(
            "INSERT INTO refs(file_id, name, count) VALUES (?, ?, ?)", ref_rows
        )
        await self.db.executemany(
            "INSERT INTO chunks(id, file_id, start_line, end_line, symbol, kind, text,"
            " embedded) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            chunk_rows,
        )
        if vec_rows:
            await self.db.executemany(
                f"INSERT INTO chunk_vec(rowid, embedding) VALUES (?, {QUANTIZE})", vec_rows
            )
        await self.db.executemany(
            "INSERT INTO chunks_fts(rowid, path, symbol, idents, body) VALUES (?, ?, ?, ?, ?)",
            fts_rows,
        )
        if chunk_rows:
            await self._save_chunk_high()
        return [r[0] for r in vec_rows], deleted

    async def touch(self, rows: Iterable[tuple[str, int, int]]) -> None:
        """Record new stat data for files whose content hash did not change."""
        updates = [(size, mtime, path) for path, size, mtime in rows]

        async def work() -> None:
            await self.db.executemany(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", updates
            )

        await self._transaction(work)

    async def remove(self, paths: Sequence[str], states: dict[str, FileState]) -> None:
        if not any(p in states for p in paths):
            return

        async def work() -> list[int]:
            # By path, as stored now: another writer may have re-created a file meanwhile.
            ids = [state.id for state in (await self.file_states(list(paths))).values()]
            deleted = await self._delete_children(ids)
            await self.db.executemany("DELETE FROM files WHERE id = ?", [(i,) for i in ids])
            return deleted

        self._note_vectors((), await self._transaction(work))

    async def pending_references(self) -> list[tuple[int, str, str, str]]:
        """Files stored without their references (and their definitions' signatures and
        docs): (id, path, language, hash)."""
        rows = await self.db.execute_fetchall(
            "SELECT id, path, language, hash FROM files WHERE refs_pending = 1 ORDER BY id"
        )
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    async def store_references(
        self,
        rows: Sequence[tuple[int, str, Sequence[tuple[str, int]], Sequence[DefinitionRow]]],
    ) -> int:
        """Add what the second pass found, as (file id, hash, references, definitions):
        the references, and the definitions again, now with signatures and docs (they
        replace the rows the first pass stored without them).

        Only for files still waiting for them with that content: a file re-written
        meanwhile (an edit re-parsed whole, another process) already has its own.
        Returns how many files were completed.
        """

        async def work() -> int:
            marks = ",".join("?" * len(rows))
            waiting = {(int(r[0]), str(r[1])) for r in await self.db.execute_fetchall(
                f"SELECT id, hash FROM files WHERE refs_pending = 1 AND id IN ({marks})",
                [r[0] for r in rows],
            )}  # fmt: skip
            keep = [r for r in rows if (r[0], r[1]) in waiting]
            ids = [(file_id,) for file_id, *_ in keep]
            await self.db.executemany("DELETE FROM refs WHERE file_id = ?", ids)
            await self.db.executemany(
                "INSERT INTO refs(file_id, name, count) VALUES (?, ?, ?)",
                [(file_id, name, count) for file_id, _, refs, _ in keep for name, count in refs],
            )
            await self.db.executemany("DELETE FROM symbols WHERE file_id = ?", ids)
            await self.db.executemany(
                _INSERT_SYMBOL,
                [_symbol_row(file_id, d) for file_id, _, _, defs in keep for d in defs],
            )
            await self.db.executemany("UPDATE files SET refs_pending = 0 WHERE id = ?", ids)
            return len(keep)

        return await self._transaction(work) if rows else 0

    async def pending_embeddings(self, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        """Chunks without a vector (ids above `after_id`), with the text to embed."""
        cursor = await self.db.execute(
            "SELECT c.id, f.path, c.symbol, c.text FROM chunks c JOIN files f"
            " ON f.id = c.file_id WHERE c.embedded = 0 AND c.id > ? ORDER BY c.id LIMIT ?",
            (after_id, limit),
        )
        return [
            (int(r[0]), embed_text(str(r[1]), str(r[2]), str(r[3])))
            for r in await cursor.fetchall()
        ]

    async def store_vectors(self, rows: Sequence[tuple[int, bytes]]) -> None:
        insert = f"INSERT INTO chunk_vec(rowid, embedding) VALUES (?, {QUANTIZE})"

        async def work() -> list[int]:
            # Only chunks still there and still without a vector: one deleted since it
            # was read, or embedded by another process meanwhile, is skipped. (Chunk ids
            # are never reused, so a surviving id still holds the text that was embedded.)
            marks = ",".join("?" * len(rows))
            waiting = {int(r[0]) for r in await self.db.execute_fetchall(
                f"SELECT id FROM chunks WHERE embedded = 0 AND id IN ({marks})",
                [r[0] for r in rows],
            )}  # fmt: skip
            keep = [r for r in rows if r[0] in waiting]
            await self.db.executemany(insert, keep)
            await self.db.executemany(
                "UPDATE chunks SET embedded = 1 WHERE id = ?", [(r[0],) for r in keep]
            )
            return [r[0] for r in keep]

        if rows:
            self._note_vectors(await self._transaction(work), ())

    async def pending_count(self) -> int:
        return await self._scalar("SELECT COUNT(*) FROM chunks WHERE embedded = 0")

    async def counts(self) -> tuple[int, int, int]:
        # Generated and minified files are recorded (so refreshes skip them) but not indexed.
        files = await self._scalar("SELECT COUNT(*) FROM files WHERE language != 'skipped'")
        symbols = await self._scalar("SELECT COUNT(*) FROM symbols")
        chunks = await self._scalar("SELECT COUNT(*) FROM chunks")
        return files, symbols, chunks

    async def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        cursor = await self.db.execute(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, c.text"
            f" FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            list(ids),
        )
        return {
            int(r[0]): ChunkRow(int(r[0]), str(r[1]), int(r[2]), int(r[3]), str(r[4]),
                                str(r[5]), str(r[6]))
            for r in await cursor.fetchall()
        }  # fmt: skip
