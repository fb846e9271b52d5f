"""Vector search that stays fast at 100k rows: binary-quantised vec0 KNN, float re-scoring.

sqlite-vec's `vec0` is brute force: k=10 over 100k `float[384]` rows costs about 60 ms on
our machines. So each item's float32 vector is kept once in a plain table (the truth,
tagged with the embedder that made it) and a `vec0` table holds only its sign bits
(`bit[D]`, 32x smaller, compared by Hamming distance), partitioned by project. A query
takes the `candidates` nearest by Hamming distance in each partition it may see and
re-scores them with the exact cosine of the float vectors, so the final order is the
float order; the quantised pass only has to keep the true neighbours among its
candidates, which a generous candidate count makes near-certain.

The `vec0` table is named after the embedder (its dimension is fixed at creation), so
switching embedders builds a fresh index while the old vectors stay until re-embedding
replaces them. Without sqlite-vec the float vectors are still stored, but `knn` returns
nothing and search falls back to FTS5 alone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import aiosqlite

from aistack_tui.storage.hashing_embedder import serialize_f32

_SAFE = re.compile(r"[^a-z0-9]+")


def index_table_name(prefix: str, embedder_name: str, dim: int) -> str:
    """`<prefix>_vec_<readable>_<hash>`: one quantised index per embedder."""
    readable = _SAFE.sub("_", embedder_name.lower()).strip("_")[:24]
    digest = hashlib.sha1(f"{embedder_name}/{dim}".encode()).hexdigest()[:8]
    return f"{prefix}_vec_{readable}_{digest}"


class VectorIndex:
    """Float vectors in `<prefix>_vectors` plus a bit-quantised `vec0` index.

    `<prefix>_vectors(item_id, embedder, vector)` is created by the owner's migrations;
    this class creates the per-embedder `vec0` table on `ensure()`. All write methods run
    inside the caller's transaction.
    """

    def __init__(
        self,
        db: aiosqlite.Connection,
        *,
        prefix: str,
        embedder_name: str,
        dim: int,
        vec_enabled: bool,
    ) -> None:
        if dim % 8:
            raise ValueError(f"vector dimension must be a multiple of 8 for bit vectors: {dim}")
        self._db = db
        self.prefix = prefix
        self.embedder_name = embedder_name
        self.dim = dim
        self.vec_enabled = vec_enabled
        self.floats = f"{prefix}_vectors"
        self.table = index_table_name(prefix, embedder_name, dim)

    async def ensure(self, partition_sql: str) -> int:
        """Create this embedder's index if missing and fill it from the stored floats.

        `partition_sql` selects `(item_id, partition)` for every indexed item. Returns the
        number of rows (re)built; 0 when the index was already complete.
        """
        if not self.vec_enabled:
            return 0
        cur = await self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (self.table,)
        )
        exists = await cur.fetchone() is not None
        if exists:
            cur = await self._db.execute(f"SELECT COUNT(*) FROM {self.table}")
            have = (await cur.fetchone() or (0,))[0]
            cur = await self._db.execute(
                f"SELECT COUNT(*) FROM {self.floats} WHERE embedder = ?", (self.embedder_name,)
            )
            want = (await cur.fetchone() or (0,))[0]
            if have == want:
                return 0
            await self._db.execute(f"DROP TABLE {self.table}")
        await self._db.execute(
            f"CREATE VIRTUAL TABLE {self.table} USING vec0("
            " item_id INTEGER PRIMARY KEY, part TEXT PARTITION KEY,"
            f" bits bit[{self.dim}])"
        )
        cur = await self._db.execute(
            f"INSERT INTO {self.table}(item_id, part, bits)"
            f" SELECT v.item_id, p.part, vec_quantize_binary(v.vector)"
            f" FROM {self.floats} AS v JOIN ({partition_sql}) AS p ON p.item_id = v.item_id"
            " WHERE v.embedder = ?",
            (self.embedder_name,),
        )
        return max(cur.rowcount, 0)

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
        if self.vec_enabled:
            await self._db.execute(f"DELETE FROM {self.table} WHERE item_id = ?", (item_id,))
            await self._db.execute(
                f"INSERT INTO {self.table}(item_id, part, bits)"
                " VALUES (?, ?, vec_quantize_binary(?))",
                (item_id, partition, blob),
            )

    async def delete(self, item_id: int) -> None:
        """Remove every embedder's vector of the item (and this embedder's index row)."""
        await self._db.execute(f"DELETE FROM {self.floats} WHERE item_id = ?", (item_id,))
        if self.vec_enabled:
            await self._db.execute(f"DELETE FROM {self.table} WHERE item_id = ?", (item_id,))

    async def knn(
        self,
        query: Sequence[float],
        partitions: Sequence[str],
        k: int,
        *,
        candidates: int = 0,
    ) -> list[tuple[int, float]]:
        """The `k` items nearest to `query` in `partitions`: `(item_id, cosine)`, best first."""
        if not self.vec_enabled or k <= 0 or not partitions:
            return []
        blob = serialize_f32(query)
        pool = max(candidates, 2 * k, 100)
        ids: set[int] = set()
        for part in partitions:
            cur = await self._db.execute(
                f"SELECT item_id FROM {self.table}"
                " WHERE bits MATCH vec_quantize_binary(?) AND k = ? AND part = ?",
                (blob, pool, part),
            )
            ids.update(int(row[0]) for row in await cur.fetchall())
        return await self.rescore(query, ids, k)

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
