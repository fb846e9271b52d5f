"""The chunk vectors of one index, kept in RAM as a matrix and searched with BLAS.

`chunk_vec` (a sqlite-vec `vec0` table of `int8[128]` vectors) is brute force without
SIMD in the x86 wheels: about 20 ms of CPU per query at 56k chunks, two thirds of the
search budget. From `MATRIX_MIN_ROWS` vectors on, and when numpy is installed, the same
int8 vectors are also held here as unit-normalised float32 rows
(`storage/vector_matrix.py`, shared with the memory store) and one matrix-vector product
ranks them all in about 1 ms. Rows cost 128 × 4 bytes plus their id: about 6 MB per
10k chunks. From `APPROXIMATE_MIN_ROWS` a product-quantised first pass (32 bytes a row,
built in the background) picks 1,000 candidates for the exact product, so a kernel-sized
index (a million chunks: 512 MB of floats to stream, ~45 ms) still costs a few ms a search.

Staying current:

- **Writes of this process** (`IndexStore.write` / `remove` / `store_vectors`) report the
  chunk ids they added and removed once their transaction has committed
  (`note_changes`); the next search removes those rows and reads the added vectors back
  from `chunk_vec` (a rowid lookup each), so the matrix holds exactly what `vec0` holds.
- **Writes of other processes** (`aistack index` in another terminal, a second session on
  the same project) are noticed with SQLite's `PRAGMA data_version` on the writer
  connection: it changes when, and only when, another connection has committed. Then the
  matrix is reloaded in the background, and searches use `vec0` until it is ready. (The
  index keeps no change log, so which ids the other process touched is not known.)

Loading starts after a refresh, or at the first search; it reads `chunk_vec` page by page
on the reader connection, so it never blocks the event loop for long, and the searches
meanwhile are answered by `vec0`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from aistack_tui.storage.background_load import BackgroundLoad
from aistack_tui.storage.vector_matrix import NUMPY_AVAILABLE, VectorMatrix

if TYPE_CHECKING:  # pragma: no cover
    import aiosqlite

log = logging.getLogger(__name__)

MATRIX_MIN_ROWS = 5000
"""Below this the `vec0` scan takes under 2 ms and numpy's import (~100 ms) is not worth it."""
APPROXIMATE_MIN_ROWS = 40_000
"""From here the first pass is built (recall@10 0.998 against exact KNN on the stdlib's
56k chunks with the bench's questions)."""
LOAD_PAGE = 8192
RELOAD_OVER = 20_000
"""More pending additions than this (a re-embedding) are cheaper to reload than to look up."""
_PART = "c"
"""The matrix's one partition: an index database holds one project."""


class ChunkVectors:
    """The in-memory copy of `chunk_vec` (see the module docstring)."""

    def __init__(
        self,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        dim: int,
        *,
        rows_hint: int = 0,
        min_rows: int = MATRIX_MIN_ROWS,
    ) -> None:
        self._writer = writer
        self._reader = reader
        self.dim = dim
        self.min_rows = min_rows
        """Below this many vectors searches use `vec0` (tests set 0)."""
        self.enabled = NUMPY_AVAILABLE
        self.rows_hint = rows_hint
        """About how many vectors `chunk_vec` holds (counted at open, moved by writes)."""
        self._matrix: VectorMatrix | None = None
        self._version: int | None = None
        self._added: set[int] = set()
        self._removed: set[int] = set()
        self._loads = BackgroundLoad("code index")
        self._apply_lock = asyncio.Lock()

    @property
    def ready(self) -> bool:
        return self._matrix is not None

    @property
    def scales(self) -> bool:
        """Whether a search costs about the same however many vectors there are (the
        matrix is loaded and searched through its first pass)."""
        return self._matrix is not None and self._matrix.has_first_pass

    def memory_bytes(self) -> int:
        """What the copy costs: its arrays plus the id → row dictionary (about 100 bytes
        an entry with its int objects)."""
        if self._matrix is None:
            return 0
        return self._matrix.nbytes() + 100 * len(self._matrix)

    def wanted(self) -> bool:
        return self.enabled and self.rows_hint >= self.min_rows

    def note_changes(self, added: Iterable[int], removed: Iterable[int]) -> None:
        """Record chunk ids whose vectors this process committed or deleted."""
        added, removed = set(added), set(removed)
        self.rows_hint = max(0, self.rows_hint + len(added) - len(removed))
        if self._matrix is None and not self._loads.running:
            return  # nothing to keep current yet: a load reads everything
        self._added |= added
        self._added -= removed
        self._removed |= removed

    # -- loading ----------------------------------------------------------------------

    def start_loading(self, *, reload: bool = False) -> None:
        """Load the matrix in the background if it is wanted, not loaded (unless `reload`)
        and not loading already."""
        if self._matrix is not None and not reload:
            return
        if self.wanted():
            self._loads.start(self._load)

    async def wait_loaded(self) -> None:
        """Wait for a background load and the first pass it started (tests and the
        benchmark's warm-up)."""
        await self._loads.wait()

    async def close(self) -> None:
        await self._loads.stop()

    async def _data_version(self) -> int:
        rows = list(await self._writer.execute_fetchall("PRAGMA data_version"))
        return int(rows[0][0]) if rows else 0

    async def _load(self) -> None:
        try:
            await self._read_all()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # e.g. out of memory: searches keep using `vec0`
            log.warning("could not load the chunk vectors into memory: %s", e)
            self.enabled = False

    async def _read_all(self) -> None:
        from aistack_tui.storage.vector_matrix import _np

        await asyncio.to_thread(_np)  # the first numpy import, off the event loop
        # The version is read first and the pending changes dropped before the first
        # page: a write landing during the load is applied again afterwards, never lost.
        version = await self._data_version()
        self._added.clear()
        self._removed.clear()
        matrix = VectorMatrix(self.dim, approximate=True,
                              approximate_min_rows=APPROXIMATE_MIN_ROWS, blob_type="int8")
        matrix.reserve(self.rows_hint + LOAD_PAGE // 8)
        cursor = await self._reader.execute("SELECT rowid, embedding FROM chunk_vec")
        try:
            while page := await cursor.fetchmany(LOAD_PAGE):
                matrix.upsert([(int(r[0]), _PART, bytes(r[1])) for r in page])
        finally:
            await cursor.close()
        self._matrix, self._version = matrix, version
        self.rows_hint = len(matrix)
        self._loads.first_pass.refresh(matrix)

    async def _lookup(self, ids: Sequence[int]) -> list[tuple[int, str, bytes]]:
        rows: list[tuple[int, str, bytes]] = []
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            found = await self._reader.execute_fetchall(
                f"SELECT rowid, embedding FROM chunk_vec WHERE rowid IN ({marks})", part
            )
            rows.extend((int(r[0]), _PART, bytes(r[1])) for r in found)
        return rows

    # -- searching --------------------------------------------------------------------

    async def knn(self, query: Sequence[float], k: int) -> list[int] | None:
        """The ids of the `k` chunks nearest to `query` by cosine, best first; None when
        the matrix is not wanted or not ready (the caller then asks `vec0`)."""
        if not self.enabled or (self._matrix is None and not self.wanted()):
            return None
        if self._loads.running:
            return None
        matrix = self._matrix
        if matrix is None:
            self.start_loading(reload=True)
            return None
        if len(self._added) > RELOAD_OVER:
            self.start_loading(reload=True)
            return None
        async with self._apply_lock:  # a concurrent search waits for these rows too
            if self._added or self._removed:
                added, removed = self._added, self._removed
                self._added, self._removed = set(), set()
                matrix.remove(removed)
                matrix.upsert(await self._lookup(sorted(added)))
                self._loads.first_pass.refresh(matrix)
        found = [item for item, _ in matrix.search(query, (_PART,), k)]
        # Checked after the product, not before: the writer connection is usually busy
        # with the same search's bm25 query, and waiting for it would serialise the legs.
        if await self._data_version() != self._version:
            self.start_loading(reload=True)  # another process wrote: reload
            return None
        return found
