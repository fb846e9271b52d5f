"""An in-process float32 copy of one embedder's vectors, searched with one matrix product.

sqlite-vec's `vec0` is brute force, and the x86 wheels are built without AVX, so every
row costs a scalar 384-step loop: about 100 ms for k=10 over 100k `float[384]` rows. Its
int8 columns are slower still, and sign-bit vectors lose too much of the offline
embedder's low-similarity signal (recall@10 of 0.1–0.2 even with a 100-row candidate
pool). A BLAS matrix-vector product over the same float32 vectors is exact and several
times faster, so once an index is large enough the vectors are also kept here, in RAM.

The copy stays correct across processes through `vector_changes`, a log that triggers on
the vector tables fill (migration 4 in `store.py`): before each search the matrix reads
the log entries newer than the last one it applied (one indexed range scan, usually
empty) and re-reads just those items. If the log has been pruned past that point it
reloads everything (`vectors.py`). numpy is imported lazily: small indexes never pay its
import. The matrix itself is domain-free and shared with the code index: it lives in
`storage/vector_matrix.py`, re-exported here.
"""

from __future__ import annotations

from aistack_tui.storage.vector_matrix import NUMPY_AVAILABLE, VectorMatrix

__all__ = ["NUMPY_AVAILABLE", "VectorMatrix"]
