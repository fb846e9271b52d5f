"""Vector search that stays exact and fast at 100k rows.

Each item's float32 vector is kept once in a plain table (the truth, tagged with the
embedder that made it). Two ways to search it:

- a `vec0` table per embedder, `float[D]` over the unit-normalised vectors, partitioned by
  project: sqlite-vec's exact brute-force KNN, fine for small indexes (about 1 µs per row on
  our machines, since the x86 wheels have no SIMD);
- from `MATRIX_MIN_ROWS` rows on, and when numpy is installed, an in-process float32
  matrix (`storage/vector_matrix.py`) searched with BLAS products, several times faster; it follows
  writes from every process through the `vector_changes` log. For the offline embedder
  from 40k rows on, a long-running session builds a product-quantised first pass (faiss
  fast scan, on a background thread) whose best 1000 candidates are re-scored exactly
  (recall@10 0.99+ against exact KNN at 100k, as measured by the bench).

Other first passes were measured and dropped (docs/benchmarks.md): sign bits keep too
little of the offline embedder's signal, int8 `vec0` columns are slower than float ones
in the x86 wheels, folding to half the dimensions streams 12x the bytes of the PQ codes,
and IVF or HNSW partitioning loses recall on these near-isotropic hashed vectors.

The `vec0` table is named after the embedder (its dimension is fixed at creation), so
switching embedders builds a fresh index while the old vectors stay until re-embedding
replaces them. Without sqlite-vec the float vectors are still stored, but `knn` returns
nothing and search falls back to FTS5 alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence

import aiosqlite

from aistack_tui.storage.background_load import BackgroundLoad
from aistack_tui.storage.disposable_thread import run_disposable
from aistack_tui.storage.hashing_embedder import serialize_f32
from aistack_tui.storage.vector_matrix import NUMPY_AVAILABLE, VectorMatrix

_SAFE = re.compile(r"[^a-z0-9]+")
MATRIX_MIN_ROWS = 5000
"""Below this, `vec0` KNN costs a few ms and numpy's import (~100 ms) is not worth it."""
LOG_KEEP = 50_000
"""`vector_changes` entries kept when pruning; a matrix further behind reloads fully."""
_RELOAD_OVER = 20_000
APPROXIMATE_MIN_ROWS = 40_000
"""From this many rows the offline embedder's matrix builds a first pass; below, the exact
product costs under 6 ms."""


def wants_first_pass(embedder_name: str) -> bool:
    """Whether a large matrix of this embedder's vectors gets an approximate first pass.

    Measured for the offline embedder only (recall@10 0.99+ against exact KNN at 100k
    rows); provider embeddings keep the exact product.
    """
    return embedder_name.startswith("hash-ngram-")


def index_table_name(prefix: str, embedder_name: str, dim: int) -> str:
    """`<prefix>_vec_<readable>_<hash>`: one float `vec0` index per embedder.

    The hash covers the index format, so the bit-quantised indexes of earlier versions
    are never mistaken for this one (`ensure` drops them).
    """
    readable = _SAFE.sub("_", embedder_name.lower()).strip("_")[:24]
    digest = hashlib.sha1(f"{embedder_name}/{dim}/float".encode()).hexdigest()[:8]
    return f"{prefix}_vec_{readable}_{digest}"


class VectorIndex:
    """Float vectors in `<prefix>_vectors`, a float `vec0` index and, when large, a matrix.

    `<prefix>_vectors(item_id, embedder, vector)` and the `vector_changes` triggers are
    created by the owner's migrations; this class creates the per-embedder `vec0` table on
    `ensure()`. All write methods run inside the caller's transaction.
    """

    def __init__(
        self,
        db: aiosqlite.Connection,
        *,
        prefix: str,
        embedder_name: str,
        dim: int,
        vec_enabled: bool,
        use_matrix: bool = NUMPY_AVAILABLE,
    ) -> None:
        self._db = db
        self.prefix = prefix
        self.embedder_name = embedder_name
        self.dim = dim
        self.vec_enabled = vec_enabled
        self.use_matrix = use_matrix and vec_enabled
        self.floats = f"{prefix}_vectors"
        self.table = index_table_name(prefix, embedder_name, dim)
        self.rows_hint = 0
        """About how many vectors this embedder has (set by `ensure`, bumped by `upsert`)."""
        self._partition_sql = ""
        self.approximate = wants_first_pass(embedder_name)
        self._matrix: VectorMatrix | None = None
        self._matrix_lock = asyncio.Lock()
        self.load_in_background = False
        """When set (a TUI or print-mode run), the first search that wants the matrix
        starts loading it and is answered by `vec0` meanwhile (~1 s to load 100k rows
        against ~0.1 s for one `vec0` search), and a large matrix then builds its first
        pass; otherwise the matrix loads first and stays exact (a one-shot command
        searches too few times to repay a 2-3 s build)."""
        self._loads = BackgroundLoad("memory")

    async def ensure(self, partition_sql: str) -> int:
        """Create this embedder's index if missing and fill it from the stored floats.

        `partition_sql` selects `(item_id, part)` for every indexed item. Drops bit
        indexes left by earlier versions. Returns the number of rows (re)built; 0 when
        the index was already complete.
        """
        self._partition_sql = partition_sql
        if not self.vec_enabled:
            return 0
        await self._drop_stale_indexes()
        cur = await self._db.execute(
            f"SELECT COUNT(*) FROM {self.floats} WHERE embedder = ?", (self.embedder_name,)
        )
        want = int((await cur.fetchone() or (0,))[0])
        self.rows_hint = want
        cur = await self._db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (self.table,))
        if await cur.fetchone() is not None:
            cur = await self._db.execute(f"SELECT COUNT(*) FROM {self.table}")
            if int((await cur.fetchone() or (0,))[0]) == want:
                return 0
            await self._db.execute(f"DROP TABLE {self.table}")
        await self._db.execute(
            f"CREATE VIRTUAL TABLE {self.table} USING vec0("
            " item_id INTEGER PRIMARY KEY, part TEXT PARTITION KEY,"
            f" embedding float[{self.dim}])"
        )
        cur = await self._db.execute(
            f"INSERT INTO {self.table}(item_id, part, embedding)"
            " SELECT v.item_id, p.part, vec_normalize(v.vector)"
            f" FROM {self.floats} AS v JOIN ({partition_sql}) AS p ON p.item_id = v.item_id"
            " WHERE v.embedder = ?",
            (self.embedder_name,),
        )
        return max(cur.rowcount, 0)

    async def _drop_stale_indexes(self) -> None:
        """Drop this prefix's sign-bit `vec0` tables (the pre-float format)."""
        cur = await self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\\'"
            " AND sql LIKE '%USING vec0%' AND sql LIKE '% bit[%'",
            (self.prefix.replace("_", "\\_") + "\\_vec\\_%",),
        )
        for (name,) in list(await cur.fetchall()):
            await self._db.execute(f'DROP TABLE "{name}"')

    async def prune_log(self) -> None:
        """Keep the newest `LOG_KEEP` change-log entries (inside a write transaction)."""
        await self._db.execute(
            "DELETE FROM vector_changes WHERE seq <= (SELECT MAX(seq) FROM vector_changes) - ?",
            (LOG_KEEP,),
        )

    async def upsert(self, item_id: int, partition: str, vector: Sequence[float]) -> None:
        if len(vector) != self.dim:
            raise ValueError(
                f"embedder {self.embedder_name} returned {len(vector)} dimensions, "
                f"expected {self.dim}"
            )
        blob = serialize_f32(vector)
        await self._db.execute(
            f"INSERT OR REPLACE INTO {self.floats}(item_id, embedder, vector) VALUES (?, ?, ?)",
            (item_id, self.embedder_name, blob),
        )
        self.rows_hint += 1
        if self.vec_enabled:
            await self._db.execute(f"DELETE FROM {self.table} WHERE item_id = ?", (item_id,))
            await self._db.execute(
                f"INSERT INTO {self.table}(item_id, part, embedding)"
                " VALUES (?, ?, vec_normalize(?))",
                (item_id, partition, blob),
            )

    async def delete(self, item_id: int) -> None:
        """Remove every embedder's vector of the item (and this embedder's index row)."""
        await self._db.execute(f"DELETE FROM {self.floats} WHERE item_id = ?", (item_id,))
        if self.vec_enabled:
            await self._db.execute(f"DELETE FROM {self.table} WHERE item_id = ?", (item_id,))

    async def knn(
        self, query: Sequence[float], partitions: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        """The `k` items nearest to `query` in `partitions`: `(item_id, cosine)`, best first."""
        if not self.vec_enabled or k <= 0 or not partitions:
            return []
        if self.use_matrix and (self._matrix is not None or self.rows_hint >= MATRIX_MIN_ROWS):
            if self._matrix is None and self.load_in_background:
                self.start_loading()
            elif not self._loads.running:
                # Inline: a worker-thread hand-off cost more than the product itself on a
                # busy machine (4 ms against 2 ms at 10k rows). Searched before the
                # change-log check, so it overlaps a bm25 query the caller queued on the
                # database thread instead of waiting behind it; a change found by the
                # check (rare) is applied and the search redone.
                before = self._matrix
                seq = before.seq if before is not None else -1
                early = before.search(query, partitions, k) if before is not None else None
                async with self._matrix_lock:
                    matrix = await self._synced_matrix()
                if matrix is not None:
                    if early is not None and matrix is before and matrix.seq == seq:
                        return early
                    return matrix.search(query, partitions, k)
        blob = serialize_f32(query)
        found: list[tuple[int, float]] = []
        for part in partitions:
            cur = await self._db.execute(
                f"SELECT item_id, distance FROM {self.table}"
                " WHERE embedding MATCH vec_normalize(?) AND k = ? AND part = ?",
                (blob, k, part),
            )
            # L2 distance between unit vectors: cosine = 1 - d² / 2.
            found.extend((int(r[0]), 1.0 - float(r[1]) ** 2 / 2) for r in await cur.fetchall())
        found.sort(key=lambda pair: pair[1], reverse=True)
        return found[:k]

    # --- the in-process matrix ------------------------------------------------------------

    def start_loading(self) -> None:
        """Load the matrix in the background if this index is large enough for it."""
        if self.use_matrix and self._matrix is None and self.rows_hint >= MATRIX_MIN_ROWS:
            self._loads.start(self._load)

    async def _load(self) -> None:
        async with self._matrix_lock:
            await self._synced_matrix()

    async def wait_loaded(self) -> None:
        """Until the background load, and the first pass it started, are done."""
        await self._loads.wait()

    async def stop_loading(self) -> None:
        await self._loads.stop()

    async def _synced_matrix(self) -> VectorMatrix | None:
        """The matrix, brought up to date with `vector_changes`; None inside a transaction
        (its uncommitted changes could still roll back) or before `ensure`."""
        matrix = await self._sync_matrix()
        if matrix is not None and self.load_in_background:
            self._loads.first_pass.refresh(matrix)
        return matrix

    async def _sync_matrix(self) -> VectorMatrix | None:
        if self._db.in_transaction or not self._partition_sql:
            return None
        # One round trip (execute_fetchall): a bm25 query the caller queued meanwhile
        # then runs on the database thread while the product runs here.
        rows = list(await self._db.execute_fetchall(
            "SELECT COALESCE(MAX(seq), 0) FROM vector_changes"
        ))
        newest = int(rows[0][0]) if rows else 0
        matrix = self._matrix
        if matrix is not None and newest == matrix.seq:
            return matrix
        if matrix is not None:
            cur = await self._db.execute(
                "SELECT COALESCE(MIN(seq), 0) FROM vector_changes WHERE seq > ?", (matrix.seq,)
            )
            oldest = int((await cur.fetchone() or (0,))[0])
            if oldest == matrix.seq + 1 and newest - matrix.seq <= _RELOAD_OVER:
                cur = await self._db.execute(
                    "SELECT DISTINCT item_id FROM vector_changes"
                    " WHERE seq > ? AND seq <= ? AND tbl = ?",
                    (matrix.seq, newest, self.prefix),
                )
                changed = [int(r[0]) for r in await cur.fetchall()]
                rows = await self._rows(changed)
                matrix.upsert(rows)
                matrix.remove(set(changed) - {r[0] for r in rows})
                matrix.seq = newest
                return matrix
        # First use, or the log was pruned past this copy: load everything. The log
        # position is read first, so a write landing meanwhile is re-applied, not lost.
        matrix = VectorMatrix(self.dim, self.approximate,
                              approximate_min_rows=APPROXIMATE_MIN_ROWS)
        rows = await self._rows(None)
        await run_disposable(lambda: matrix.replace_all(rows, newest), "vector-matrix-load")
        self._matrix = matrix
        return matrix

    async def _rows(self, ids: Sequence[int] | None) -> list[tuple[int, str, bytes]]:
        sql = (
            f"SELECT v.item_id, p.part, v.vector FROM {self.floats} AS v"
            f" JOIN ({self._partition_sql}) AS p ON p.item_id = v.item_id"
            " WHERE v.embedder = ?"
        )
        if ids is None:
            cur = await self._db.execute(sql, (self.embedder_name,))
            return [(int(r[0]), str(r[1]), bytes(r[2])) for r in await cur.fetchall()]
        rows: list[tuple[int, str, bytes]] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            cur = await self._db.execute(
                f"{sql} AND v.item_id IN ({','.join('?' * len(chunk))})",
                (self.embedder_name, *chunk),
            )
            rows.extend((int(r[0]), str(r[1]), bytes(r[2])) for r in await cur.fetchall())
        return rows

    async def rescore(
        self, query: Sequence[float], ids: set[int] | Sequence[int], k: int
    ) -> list[tuple[int, float]]:
        """Exact cosine of the float vectors of `ids`, best first (vec extension needed)."""
        if not ids or not self.vec_enabled:
            return []
        blob = serialize_f32(query)
        id_list = list(ids)
        scored: list[tuple[int, float]] = []
        for start in range(0, len(id_list), 500):
            chunk = id_list[start : start + 500]
            marks = ",".join("?" * len(chunk))
            cur = await self._db.execute(
                f"SELECT item_id, vec_distance_cosine(vector, ?) FROM {self.floats}"
                f" WHERE embedder = ? AND item_id IN ({marks})",
                (blob, self.embedder_name, *chunk),
            )
            scored.extend((int(r[0]), 1.0 - float(r[1])) for r in await cur.fetchall())
        scored.sort(key=lambda pair: pair[1], reverse=True)
        return scored[:k]
