"""The product-quantised first pass of `VectorMatrix`: exact re-scored results, rows added,
overwritten and removed after it was built, and renumbering that makes a build stale."""

from __future__ import annotations

import numpy as np
import pytest

from aistack_tui.storage import pq_first_pass
from aistack_tui.storage.vector_matrix import VectorMatrix

DIM = 96


def clustered(rows: int, seed: int) -> np.ndarray:
    """Unit vectors around 40 centres: neighbours are meaningful, as real embeddings'."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIM))
    data = centres[rng.integers(0, 40, rows)] + 0.6 * rng.standard_normal((rows, DIM))
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data.astype(np.float32)


def blobs(data: np.ndarray, start: int = 0, part: str = "p") -> list[tuple[int, str, bytes]]:
    return [(start + i, part, row.tobytes()) for i, row in enumerate(data)]


def with_first_pass(rows: list[tuple[int, str, bytes]]) -> VectorMatrix:
    matrix = VectorMatrix(DIM, approximate=True, candidates=100, approximate_min_rows=0)
    matrix.replace_all(rows, 0)
    build = matrix.first_pass_due()
    assert build is not None
    assert matrix.install_first_pass(build, build.run())
    return matrix


def test_first_pass_finds_the_exact_neighbours_with_exact_cosines() -> None:
    both = clustered(3020, seed=1)
    data, queries = both[:3000], both[3000:]
    approx = with_first_pass(blobs(data))
    exact = VectorMatrix(DIM)
    exact.replace_all(blobs(data), 0)
    assert approx.first_pass_due() is None
    overlap = []
    for query in queries:
        got = approx.search(query.tolist(), ["p"], 10)
        want = exact.search(query.tolist(), ["p"], 10)
        cosine = data @ query
        for item, score in got:
            assert score == pytest.approx(float(cosine[item]), abs=1e-5)
        overlap.append(len({i for i, _ in got} & {i for i, _ in want}) / 10)
    assert np.mean(overlap) >= 0.9, overlap


def test_rows_added_after_the_build_are_encoded_and_found() -> None:
    data = clustered(2000, seed=3)
    matrix = with_first_pass(blobs(data))
    fresh = clustered(30, seed=4)
    matrix.upsert(blobs(fresh, start=5000))
    got = matrix.search(fresh[7].tolist(), ["p"], 1)
    assert got[0][0] == 5007 and got[0][1] == pytest.approx(1.0, abs=1e-5)
    assert matrix._first_pass is not None and matrix._first_pass.covered == 2030


def test_an_overwritten_item_is_found_by_its_new_vector_only() -> None:
    data = clustered(2000, seed=5)
    matrix = with_first_pass(blobs(data))
    old, new = data[10].copy(), data[1500].copy()
    matrix.upsert([(10, "p", new.tobytes())])
    assert len(matrix) == 2000
    by_new = matrix.search(new.tolist(), ["p"], 2)
    assert {item for item, _ in by_new} == {10, 1500}
    by_old = matrix.search(old.tolist(), ["p"], 5)
    assert 10 not in {item for item, _ in by_old}
    matrix.remove([1500])
    assert [item for item, _ in matrix.search(new.tolist(), ["p"], 1)] == [10]


def test_a_partition_is_searched_alone() -> None:
    data = clustered(3000, seed=6)
    rows = [(i, "mine" if i % 4 == 0 else "other", data[i].tobytes()) for i in range(3000)]
    matrix = with_first_pass(rows)
    for query in clustered(5, seed=7):
        got = matrix.search(query.tolist(), ["mine"], 10)
        assert len(got) == 10 and all(item % 4 == 0 for item, _ in got)


def test_renumbering_drops_the_pass_and_rejects_a_stale_build() -> None:
    data = clustered(4400, seed=8)
    matrix = with_first_pass(blobs(data))
    matrix._first_pass = None
    stale = matrix.first_pass_due()
    assert stale is not None
    matrix.remove(range(1200))  # a quarter dead: the rows are squeezed and renumbered
    assert not matrix.install_first_pass(stale, stale.run())
    query = data[3000].tolist()
    assert matrix.search(query, ["p"], 1)[0][0] == 3000
    build = matrix.first_pass_due()
    assert build is not None and len(build.rows) == 3200
    assert matrix.install_first_pass(build, build.run())
    assert matrix.search(query, ["p"], 1)[0][0] == 3000


def test_without_faiss_the_matrix_stays_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pq_first_pass, "FAISS_AVAILABLE", False)
    matrix = VectorMatrix(DIM, approximate=True, approximate_min_rows=0)
    matrix.replace_all(blobs(clustered(1500, seed=9)), 0)
    assert not matrix.approximate and matrix.first_pass_due() is None


def test_too_few_rows_to_train_wait_for_more() -> None:
    matrix = VectorMatrix(DIM, approximate=True, approximate_min_rows=0)
    matrix.replace_all(blobs(clustered(pq_first_pass.MIN_ROWS - 1, seed=10)), 0)
    assert matrix.first_pass_due() is None
    matrix.upsert(blobs(clustered(1, seed=11), start=10_000))
    assert matrix.first_pass_due() is not None
