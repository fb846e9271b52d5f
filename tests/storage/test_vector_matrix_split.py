"""The two-thread matrix-vector product gives exactly the single-thread result."""

from __future__ import annotations

import numpy as np

from aistack_tui.storage import vector_matrix
from aistack_tui.storage.vector_matrix import SPLIT_MIN_ROWS, VectorMatrix, _matvec


def test_split_product_equals_the_plain_product() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((SPLIT_MIN_ROWS + 7, 64), dtype=np.float32)
    vector = rng.standard_normal(64, dtype=np.float32)
    # Same products; BLAS may block the halves differently, so the last bits can differ.
    assert np.allclose(_matvec(matrix, vector), matrix @ vector, rtol=1e-5, atol=1e-5)
    small = matrix[:100]
    assert np.array_equal(_matvec(small, vector), small @ vector)


def test_search_ranks_the_same_with_and_without_the_split(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    rows = SPLIT_MIN_ROWS + 100
    vectors = rng.standard_normal((rows, 32), dtype=np.float32)
    matrix = VectorMatrix(32)
    matrix.upsert([(i, "p", vectors[i].tobytes()) for i in range(rows)])
    query = rng.standard_normal(32).tolist()
    split = matrix.search(query, ["p"], 10)
    monkeypatch.setattr(vector_matrix, "SPLIT_MIN_ROWS", rows * 10)
    assert matrix.search(query, ["p"], 10) == split
    exact = vectors / np.linalg.norm(vectors, axis=1, keepdims=True) @ np.asarray(query)
    assert [item for item, _ in split] == list(np.argsort(-exact)[:10])
