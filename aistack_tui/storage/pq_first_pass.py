"""A candidate finder over a vector matrix: faiss's 4-bit product-quantisation fast scan.

At 100k rows an exact float product streams 154 MB per query, and even a folded
half-dimension first pass streams 77 MB (~6.5 ms on our two cores, memory-bound). Product
quantisation keeps 4 bits per 3 dimensions (64 bytes a row for 384 dimensions, 6.4 MB at
100k) and faiss's fast-scan kernel scores them with SIMD table look-ups: about 1.5 ms for
the best 1,000 of 100k rows on one core. The caller re-scores those candidates exactly,
which keeps recall@10 at 0.99+ on the offline embedder's vectors (measured by
`bench/memory_retrieval.py`; the folded pass reached 0.97).

Rows are identified by their position in the caller's matrix; the pass only ever grows
(`extend`), so a caller that rewrites or removes rows masks them itself and builds a new
pass when it renumbers them. Building trains the quantiser (k-means, ~1-2 s at 100k
rows on one core) and runs in a worker thread: faiss releases the GIL while it works.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

FAISS_AVAILABLE = importlib.util.find_spec("faiss") is not None

TRAINING_ROWS = 4096
"""Rows the quantiser is trained on, spread evenly over the matrix: faiss's k-means uses
at most 256 points per centroid (16 centroids a sub-vector) and samples the rest away."""

MIN_ROWS = 1000
"""Fewer rows than this cannot train 16 centroids per sub-vector well (faiss asks for
39 points per centroid), and the exact product over them costs well under 1 ms anyway."""

_faiss_configured = False


def _faiss() -> Any:
    """faiss, held to one OpenMP thread: a single query's scan is not parallelised, and
    training on both cores would starve the event loop and the bm25 query of the
    other."""
    global _faiss_configured
    import faiss

    if not _faiss_configured:
        _faiss_configured = True
        faiss.omp_set_num_threads(1)
    return faiss


def subquantizers(dim: int) -> int:
    """Sub-vectors per row: 3 dimensions each when they divide evenly, else 2. Measured
    recall@10 after re-scoring 1,000 candidates: 384 dimensions in 3s 0.998 (in 4s 0.984)
    on the memory bench; the code index's 128 in 2s 0.998 (in 4s 0.974) on the stdlib."""
    for width in (3, 2):
        if dim % width == 0:
            return dim // width
    return dim


class ProductQuantisedPass:
    """4-bit PQ codes of rows `0 .. covered` of a unit-normalised float32 matrix."""

    def __init__(self, index: Any) -> None:
        self._index = index

    @classmethod
    def build(cls, rows: np.ndarray) -> ProductQuantisedPass:
        """Train a quantiser on `rows` (a sample of them) and encode them all. Slow: call
        from a worker thread."""
        import numpy

        faiss = _faiss()
        dim = rows.shape[1]
        index = faiss.IndexPQFastScan(dim, subquantizers(dim), 4, faiss.METRIC_INNER_PRODUCT)
        step = max(1, len(rows) // TRAINING_ROWS)
        index.train(numpy.ascontiguousarray(rows[::step][:TRAINING_ROWS]))
        index.add(numpy.ascontiguousarray(rows))
        return cls(index)

    @property
    def covered(self) -> int:
        """How many leading rows of the matrix have codes."""
        return int(self._index.ntotal)

    def nbytes(self) -> int:
        return int(self._index.ntotal * self._index.code_size)

    def extend(self, rows: np.ndarray) -> None:
        """Encode rows appended to the matrix since (about 0.1 ms a row)."""
        if len(rows):
            import numpy

            self._index.add(numpy.ascontiguousarray(rows))

    def candidates(self, query: np.ndarray, pool: int) -> np.ndarray:
        """Row numbers of the (about) `pool` rows with the highest approximate inner
        product with the unit `query`."""
        import numpy

        _, found = self._index.search(numpy.ascontiguousarray(query[None, :]), pool)
        rows: np.ndarray = found[0]
        return rows[rows >= 0]
