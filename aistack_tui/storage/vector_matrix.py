"""An in-process float32 matrix of vectors, searched with one BLAS product.

sqlite-vec's `vec0` is brute force, and the x86 wheels are built without AVX, so every
row costs a scalar loop over its dimensions: about 100 ms for k=10 over 100k `float[384]`
rows, about 20 ms over 56k `int8[128]` rows. A BLAS matrix-vector product over the same
vectors is several times faster, so the memory store (`memory/vectors.py`) and the code
index (`knowledge/vector_cache.py`) keep a copy of their vectors here, in RAM. This module
is domain-free: rows are `(item_id, partition, blob)`; keeping the copy current is the
owner's job. numpy is imported lazily: small indexes never pay its import.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


class VectorMatrix:
    """Unit-normalised float32 rows with their item ids and partitions.

    Rows are appended into spare capacity (no copy per write); deleted rows are masked
    out and squeezed away once they are a quarter of the matrix.
    """

    def __init__(
        self,
        dim: int,
        fold: int = 0,
        candidates: int = 1000,
        fold_min_rows: int = 40_000,
        *,
        blob_type: str = "float32",
    ) -> None:
        np = _np()
        if fold and (dim % fold or fold >= dim):
            raise ValueError(f"cannot fold {dim} dimensions to {fold}")
        if blob_type not in BLOB_TYPES:
            raise ValueError(f"unknown blob type {blob_type!r}; expected one of {list(BLOB_TYPES)}")
        self.dim = dim
        self.blob_type = blob_type
        """How `upsert` decodes blobs. Rows are unit-normalised either way, so an int8
        blob's quantisation scale does not matter, only its direction."""
        self.fold = fold
        """Dimensions of the first pass (0: none, the exact product only)."""
        self.candidates = candidates
        """How many first-pass candidates are re-scored exactly."""
        self.fold_min_rows = fold_min_rows
        """Below this many rows the exact product is cheap enough (2 ms at 10k)."""
        self._small: np.ndarray = np.zeros((0, fold), dtype=np.float32)
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
        return int(self._mat.nbytes + self._small.nbytes + self._ids.nbytes + self._parts.nbytes)

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
        small = np.zeros((cap, self.fold), dtype=np.float32)
        small[: self._n] = self._small[: self._n]
        self._small = small
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
        self._mat = np.zeros((0, self.dim), dtype=np.float32)
        self._small = np.zeros((0, self.fold), dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)
        self._parts = np.zeros(0, dtype=np.int32)
        self.upsert(rows)
        self.seq = seq

    def upsert(self, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Add or overwrite rows; blobs of the wrong size are skipped (another embedder)."""
        np = _np()
        size = BLOB_TYPES[self.blob_type] * self.dim
        good = [r for r in rows if len(r[2]) == size]
        if not good:
            return
        block = np.frombuffer(b"".join(r[2] for r in good), dtype=self.blob_type)
        block = block.reshape(len(good), self.dim).astype(np.float32, copy=False)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        block = block / np.where(norms > 0, norms, 1.0)
        small = self._folded(block)
        fresh = [i for i, r in enumerate(good) if r[0] not in self._row_of]
        self._reserve(len(fresh))
        for i, (item_id, part, _) in enumerate(good):
            row = self._row_of.get(item_id)
            if row is None:
                row = self._n
                self._n += 1
                self._row_of[item_id] = row
                self._ids[row] = item_id
            self._mat[row] = block[i]
            if self.fold:
                self._small[row] = small[i]
            self._parts[row] = self._code(part)

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
        self._mat = self._mat[: self._n][live].copy()
        self._small = self._small[: self._n][live].copy()
        self._ids = self._ids[: self._n][live].copy()
        self._parts = self._parts[: self._n][live].copy()
        self._n = len(self._ids)
        self._dead = 0
        self._row_of = {int(item): row for row, item in enumerate(self._ids.tolist())}

    def search(
        self, query: Sequence[float], partitions: Sequence[str], k: int
    ) -> list[tuple[int, float]]:
        """The `k` rows nearest to `query` by cosine within `partitions`, best first.

        Without `fold`, exact: the ranking of `vec_distance_cosine` over the float
        vectors. With it, the exact cosines of the first pass's best `candidates` rows.
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
        else:
            parts = self._parts[: self._n]
            mask: np.ndarray = parts == codes[0] if len(codes) == 1 else np.isin(parts, codes)
            allowed = mask
            k = min(k, int(mask.sum()))
        if k <= 0:
            return []
        pool = max(self.candidates, k)
        if self.fold and self._n >= self.fold_min_rows and pool < self._n // 4:
            # First pass over the folded copy (half the bytes to stream), then the exact
            # cosine of its best `pool` rows.
            approx = _matvec(self._small[: self._n], self._folded(q[None, :])[0])
            if allowed is not None:
                approx = np.where(allowed, approx, -np.inf)
            rows = np.argpartition(approx, self._n - pool)[self._n - pool :]
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
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._ids[rows[i]]), float(scores[i])) for i in top]

    def _folded(self, block: np.ndarray) -> np.ndarray:
        """Coordinate i added into i mod `fold`: a projection that keeps the offline
        embedder's hashed features apart far better than a random one (measured:
        recall@10 0.98 after re-scoring 1000 candidates at 100k rows, 0.85 for Gaussian)."""
        if not self.fold:
            return block[:, :0]
        n = block.shape[0]
        return block.reshape(n, self.dim // self.fold, self.fold).sum(axis=1, dtype=_np().float32)
