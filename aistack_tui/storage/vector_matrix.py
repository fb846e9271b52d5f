"""An in-process float32 matrix of vectors, searched with one BLAS product.

sqlite-vec's `vec0` is brute force, and the x86 wheels are built without AVX, so every
row costs a scalar loop over its dimensions: about 100 ms for k=10 over 100k `float[384]`
rows, about 20 ms over 56k `int8[128]` rows. A BLAS matrix-vector product over the same
vectors is several times faster, so the memory store (`memory/vectors.py`) and the code
index (`knowledge/vector_cache.py`) keep a copy of their vectors here, in RAM. This module
is domain-free: rows are `(item_id, partition, blob)`; keeping the copy current is the
owner's job. numpy is imported lazily: small indexes never pay its import.

A large matrix can also carry an approximate first pass (`storage/pq_first_pass.py`):
the owner asks `first_pass_due`, builds it in a worker thread and installs it; searches
are exact until then.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.storage import pq_first_pass
from aistack_tui.storage.pq_first_pass import ProductQuantisedPass

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

BLOB_TYPES = {"float32": 4, "int8": 1}
"""Blob encodings `VectorMatrix` reads, with their bytes per dimension: float32 as
`serialize_f32` writes it, int8 as sqlite-vec's `vec_quantize_int8` returns it."""

NUMPY_AVAILABLE = importlib.util.find_spec("numpy") is not None


_blas_configured = False

SPLIT_MIN_ROWS = 40_000
"""From this many rows a matrix-vector product is split in two halves run on two threads.

The product is memory-bound and BLAS is held to one thread (see `_one_blas_thread`), so
one core streams the matrix alone; numpy releases the GIL inside the product, so a second
thread streaming the other half nearly halves the wall time (measured at 100k x 192:
9.4 ms -> 5.1 ms). Below this size the hand-off costs more than it saves."""

_helper: ThreadPoolExecutor | None = None


def _matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """`matrix @ vector`, on two cores when the matrix is large and two are there."""
    global _helper
    rows = matrix.shape[0]
    if rows < SPLIT_MIN_ROWS or (os.cpu_count() or 1) < 2:
        return matrix @ vector
    np = _np()
    out = np.empty(rows, dtype=np.result_type(matrix.dtype, vector.dtype))
    half = rows // 2
    if _helper is None:
        _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-matrix")
    other = _helper.submit(np.matmul, matrix[half:], vector, out=out[half:])
    np.matmul(matrix[:half], vector, out=out[:half])
    other.result()
    return out


def _np() -> Any:
    """numpy, with its OpenBLAS kept to one thread (see `_one_blas_thread`)."""
    global _blas_configured
    import numpy

    if not _blas_configured:
        _blas_configured = True
        _one_blas_thread(numpy)
    return numpy


def _one_blas_thread(numpy: Any) -> None:
    """A matrix-vector product is memory-bound, and on our 2-core machines OpenBLAS's
    thread hand-offs made it 10-20x slower (12 ms against 0.5 ms for 10k x 192) while
    the other core runs the bm25 query. numpy may already be imported by then, and
    OPENBLAS_NUM_THREADS would leak into every command the Bash tool runs: call the
    bundled library's setter. Best effort: an unknown BLAS build is left alone."""
    base = Path(numpy.__file__).parent
    candidates = [*base.parent.joinpath("numpy.libs").glob("libscipy_openblas*.so*"),
                  *base.joinpath(".dylibs").glob("libscipy_openblas*.dylib")]
    for path in candidates:
        try:
            lib = ctypes.CDLL(str(path))
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(1)
                return


@dataclass(frozen=True)
class FirstPassBuild:
    """A matrix's rows as they were when a first pass was asked for."""

    generation: int
    rows: np.ndarray

    def run(self) -> ProductQuantisedPass:
        """Train and encode (seconds at 100k rows): call from a worker thread."""
        return ProductQuantisedPass.build(self.rows)


class VectorMatrix:
    """Unit-normalised float32 rows with their item ids and partitions.

    Rows are appended into spare capacity (no copy per write); deleted rows are masked
    out and squeezed away once they are a quarter of the matrix.
    """

    def __init__(
        self,
        dim: int,
        approximate: bool = False,
        candidates: int = 1000,
        approximate_min_rows: int = 40_000,
        *,
        blob_type: str = "float32",
    ) -> None:
        np = _np()
        if blob_type not in BLOB_TYPES:
            raise ValueError(f"unknown blob type {blob_type!r}; expected one of {list(BLOB_TYPES)}")
        self.dim = dim
        self.blob_type = blob_type
        """How `upsert` decodes blobs. Rows are unit-normalised either way, so an int8
        blob's quantisation scale does not matter, only its direction."""
        self.approximate = approximate and pq_first_pass.FAISS_AVAILABLE
        """Search large matrices with a product-quantised first pass (needs faiss)."""
        self.candidates = candidates
        """How many first-pass candidates are re-scored exactly."""
        self.approximate_min_rows = approximate_min_rows
        """Below this many rows the exact product is cheap enough (2 ms at 10k)."""
        self._first_pass: ProductQuantisedPass | None = None
        self._generation = 0
        """Bumped whenever rows are renumbered, so a first pass built from an older
        snapshot is not installed over them."""
        self.seq = 0
        """The last `vector_changes.seq` applied."""
        self._mat: np.ndarray = np.zeros((0, dim), dtype=np.float32)
        self._ids: np.ndarray = np.zeros(0, dtype=np.int64)
        self._parts: np.ndarray = np.zeros(0, dtype=np.int32)
        self._n = 0
        self._dead = 0
        self._row_of: dict[int, int] = {}
        self._part_code: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._row_of

    def ids(self) -> set[int]:
        """The item ids of the live rows."""
        return set(self._row_of)

    def nbytes(self) -> int:
        """Bytes held by the arrays (capacity included; the id dictionary is not)."""
        first = self._first_pass.nbytes() if self._first_pass is not None else 0
        return int(self._mat.nbytes + self._ids.nbytes + self._parts.nbytes + first)

    def _code(self, part: str) -> int:
        return self._part_code.setdefault(part, len(self._part_code))

    def reserve(self, rows: int) -> None:
        """Make room for `rows` rows in all, so a known-size load allocates once."""
        self._reserve(max(0, rows - self._n))

    def _reserve(self, extra: int) -> None:
        np = _np()
        need = self._n + extra
        if need <= len(self._ids):
            return
        cap = max(need, 2 * len(self._ids), 1024) if self._n else need
        mat = np.zeros((cap, self.dim), dtype=np.float32)
        mat[: self._n] = self._mat[: self._n]
        ids = np.zeros(cap, dtype=np.int64)
        ids[: self._n] = self._ids[: self._n]
        parts = np.full(cap, -1, dtype=np.int32)
        parts[: self._n] = self._parts[: self._n]
        self._mat, self._ids, self._parts = mat, ids, parts

    def replace_all(self, rows: Sequence[tuple[int, str, bytes]], seq: int) -> None:
        """Load `(item_id, partition, float32 blob)` rows, dropping what was there."""
        np = _np()
        self._n = self._dead = 0
        self._row_of.clear()
        self._renumbered()
        self._mat = np.zeros((0, self.dim), dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)
        self._parts = np.zeros(0, dtype=np.int32)
        self.upsert(rows)
        self.seq = seq

    def upsert(self, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Add or overwrite rows; blobs of the wrong size are skipped (another embedder)."""
        np = _np()
        size = BLOB_TYPES[self.blob_type] * self.dim
        # One row per item: the last blob given for it wins.
        good = list({r[0]: r for r in rows if len(r[2]) == size}.values())
        if not good:
            return
        block = np.frombuffer(b"".join(r[2] for r in good), dtype=self.blob_type)
        block = block.reshape(len(good), self.dim).astype(np.float32, copy=False)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        block = block / np.where(norms > 0, norms, 1.0)
        # Rows are only ever appended: an overwritten item gets a fresh row and its old
        # one is masked, so a first pass's codes never go stale.
        self.remove(r[0] for r in good)
        self._reserve(len(good))
        start = self._n
        self._mat[start : start + len(good)] = block
        for i, (item_id, part, _) in enumerate(good):
            self._row_of[item_id] = start + i
            self._ids[start + i] = item_id
            self._parts[start + i] = self._code(part)
        self._n += len(good)

    def remove(self, item_ids: Iterable[int]) -> None:
        for item_id in item_ids:
            row = self._row_of.pop(item_id, None)
            if row is not None:
                self._parts[row] = -1
                self._dead += 1
        if self._dead > 1024 and self._dead * 4 > self._n:
            self._compact()

    def _compact(self) -> None:
        live = self._parts[: self._n] >= 0
        self._renumbered()
        self._mat = self._mat[: self._n][live].copy()
        self._ids = self._ids[: self._n][live].copy()
        self._parts = self._parts[: self._n][live].copy()
        self._n = len(self._ids)
        self._dead = 0
        self._row_of = {int(item): row for row, item in enumerate(self._ids.tolist())}

    def _renumbered(self) -> None:
        self._first_pass = None
        self._generation += 1

    @property
    def has_first_pass(self) -> bool:
        """Whether searches of a large matrix go through the first pass (a few ms at a
        million rows) rather than the exact product (tens of ms)."""
        return self._first_pass is not None

    def first_pass_due(self) -> FirstPassBuild | None:
        """A snapshot to build a first pass from when this matrix wants one and has none:
        run it in a worker thread, then `install_first_pass`. Rows appended meanwhile
        are encoded at the next search."""
        if (not self.approximate or self._first_pass is not None
                or self._n < max(self.approximate_min_rows, pq_first_pass.MIN_ROWS)):
            return None
        return FirstPassBuild(self._generation, self._mat[: self._n])

    def install_first_pass(self, build: FirstPassBuild, first_pass: ProductQuantisedPass) -> bool:
        """Use `first_pass` unless rows were renumbered since its snapshot was taken."""
        if build.generation != self._generation:
            return False
        self._first_pass = first_pass
        return True

    def search(
        self, query: Sequence[float], partitions: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        """The `k` rows nearest to `query` by cosine within `partitions`, best first.

        Exact (the ranking of `vec_distance_cosine` over the float vectors) unless a
        first pass is installed and the rows asked for are a large enough share: then
        the exact cosines of its best `candidates` rows.
        """
        np = _np()
        codes = [self._part_code[p] for p in partitions if p in self._part_code]
        if not codes or k <= 0 or self._n == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0.0:
            return []
        q = q / norm
        # Every partition asked for and nothing deleted: no row mask to build (an `isin`
        # over every row) or apply.
        everything = not self._dead and len(set(codes)) == len(self._part_code)
        allowed: np.ndarray | None = None
        if everything:
            k = min(k, self._n)
            wanted = self._n
        else:
            parts = self._parts[: self._n]
            mask: np.ndarray = parts == codes[0] if len(codes) == 1 else np.isin(parts, codes)
            allowed = mask
            wanted = int(mask.sum())
            k = min(k, wanted)
        if k <= 0:
            return []
        # The first pass ranks every row, wanted or not: ask it for proportionally more.
        pool = max(self.candidates, k) * self._n // wanted
        if self._first_pass is not None and pool < self._n // 4:
            self._first_pass.extend(self._mat[self._first_pass.covered : self._n])
            rows = self._first_pass.candidates(q, pool)
            if allowed is not None:
                rows = rows[allowed[rows]]
            scores = self._mat[rows] @ q
        elif allowed is None:
            rows = np.arange(self._n)
            scores = _matvec(self._mat[: self._n], q)
        else:
            rows = np.flatnonzero(allowed)
            scores = _matvec(self._mat[: self._n], q)
            scores = scores[rows] if len(rows) < self._n else scores
        k = min(k, len(rows))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._ids[rows[i]]), float(scores[i])) for i in top]
