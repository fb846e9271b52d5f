"""The in-memory chunk vectors: same ranking as `vec0`, current across refreshes and
across connections (another process writing the same index)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.knowledge import KnowledgeIndex
from aistack_tui.knowledge.search import CANDIDATES
from aistack_tui.knowledge.store import QUANTIZE
from aistack_tui.knowledge.vector_cache import ChunkVectors
from aistack_tui.storage.hashing_embedder import serialize_f32
from aistack_tui.storage.vector_matrix import NUMPY_AVAILABLE
from tests.knowledge.test_search_quality import LABELLED, _target_line

pytestmark = pytest.mark.skipif(not NUMPY_AVAILABLE, reason="numpy is not installed")


async def _loaded_cache(index: KnowledgeIndex) -> ChunkVectors:
    """The index's cache with the size threshold lifted, loaded."""
    cache = index.store.vector_cache
    assert cache is not None, "sqlite-vec did not load"
    cache.min_rows = 0
    cache.start_loading()
    await cache.wait_loaded()
    assert cache.ready
    return cache


async def _vec0(index: KnowledgeIndex, vector: list[float], k: int) -> list[int]:
    rows = await index.store.db.execute_fetchall(
        f"SELECT rowid FROM chunk_vec WHERE embedding MATCH {QUANTIZE} AND k = ?"
        " ORDER BY distance",
        (serialize_f32(vector), k),
    )
    return [int(r[0]) for r in rows]


async def _matrix(index: KnowledgeIndex, query: str, k: int) -> list[int]:
    cache = index.store.vector_cache
    assert cache is not None
    vector = (await index.embedder.embed([query]))[0]
    found = await cache.knn(vector, k)
    assert found is not None, "the matrix did not answer"
    return found


async def test_matrix_ranks_like_vec0(bookshop_index: KnowledgeIndex) -> None:
    """Cosine over the decoded int8 rows against `vec0`'s L2 over the same int8 rows:
    the same neighbours, up to near-ties at the quantisation step."""
    await _loaded_cache(bookshop_index)
    overlap = same_first = 0
    for question, _, _ in LABELLED:
        vector = (await bookshop_index.embedder.embed([question]))[0]
        exact = await _vec0(bookshop_index, vector, 10)
        mine = await _matrix(bookshop_index, question, 10)
        assert len(mine) == len(exact) == 10
        overlap += len(set(mine) & set(exact))
        same_first += mine[0] == exact[0]
    print(f"\noverlap@10 {overlap / (10 * len(LABELLED)):.3f} top-1 {same_first / len(LABELLED):.3f}")
    assert overlap / (10 * len(LABELLED)) >= 0.9
    assert same_first / len(LABELLED) >= 0.9


async def test_labelled_questions_hold_their_hit_rate_with_the_matrix(
    bookshop_index: KnowledgeIndex,
) -> None:
    async def hit_rate() -> float:
        hits = 0
        for question, path, symbol in LABELLED:
            line = await _target_line(bookshop_index, path, symbol)
            results = await bookshop_index.search(question, limit=5)
            hits += any(r.path == path and r.start_line <= line <= r.end_line for r in results)
        return hits / len(LABELLED)

    with_vec0 = await hit_rate()
    cache = await _loaded_cache(bookshop_index)
    with_matrix = await hit_rate()
    assert cache.ready
    print(f"\nhit@5 vec0 {with_vec0:.3f} matrix {with_matrix:.3f}")
    assert with_matrix >= 0.9
    assert with_matrix >= with_vec0 - 1 / len(LABELLED)


async def test_matrix_sees_chunks_added_and_removed_by_a_refresh(
    bookshop: Path, bookshop_index: KnowledgeIndex
) -> None:
    cache = await _loaded_cache(bookshop_index)
    before = len(cache._matrix or ())
    added = bookshop / "shop" / "gift_wrapping.py"
    added.write_text(
        "def wrap_gift_in_paper(order, ribbon_colour):\n"
        '    """Wrap each parcel of the order in festive paper with a ribbon."""\n'
        "    return [f'{item} wrapped with {ribbon_colour}' for item in order]\n"
    )
    await bookshop_index.refresh_paths([added])
    rows = await bookshop_index.store.db.execute_fetchall(
        "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
        ("shop/gift_wrapping.py",),
    )
    new_ids = {int(r[0]) for r in rows}
    assert new_ids
    found = await _matrix(bookshop_index, "wrap gift in paper with ribbon", 5)
    assert found[0] in new_ids
    assert len(cache._matrix or ()) == before + len(new_ids)

    removed = bookshop / "shop" / "cache.py"
    old = {int(r[0]) for r in await bookshop_index.store.db.execute_fetchall(
        "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
        ("shop/cache.py",),
    )}  # fmt: skip
    assert old
    removed.unlink()
    await bookshop_index.refresh()  # a full walk notices the deletion
    found = await _matrix(bookshop_index, "least recently used cache", CANDIDATES)
    assert not old & set(found)
    assert not old & (cache._matrix.ids() if cache._matrix else set())
    assert len(cache._matrix or ()) == before + len(new_ids) - len(old)


async def test_matrix_follows_writes_of_another_connection(
    bookshop: Path, aistack_home: Path, bookshop_index: KnowledgeIndex
) -> None:
    """A second index on the same database (as another process would open it) writes;
    the first notices through `PRAGMA data_version`, answers with `vec0` while it
    reloads, then sees the new chunk in memory."""
    cache = await _loaded_cache(bookshop_index)
    added = bookshop / "shop" / "loyalty.py"
    added.write_text(
        "def award_loyalty_points(customer, basket_total):\n"
        '    """Give the customer one loyalty point per whole pound spent."""\n'
        "    return customer.points + int(basket_total)\n"
    )
    other = await KnowledgeIndex.open(aistack_home, bookshop)
    try:
        await other.refresh_paths([added])
    finally:
        await other.close()
    vector = (await bookshop_index.embedder.embed(["award loyalty points"]))[0]
    assert await cache.knn(vector, 5) is None  # stale: reloading in the background
    hits = await bookshop_index.search("award loyalty points", limit=3)
    assert hits and hits[0].path == "shop/loyalty.py"  # vec0 and bm25 meanwhile
    await cache.wait_loaded()
    found = await _matrix(bookshop_index, "award loyalty points", 5)
    rows = await bookshop_index.store.db.execute_fetchall(
        "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
        ("shop/loyalty.py",),
    )
    assert found[0] in {int(r[0]) for r in rows}


async def test_small_indexes_keep_using_vec0(bookshop_index: KnowledgeIndex) -> None:
    """Below the threshold neither numpy nor a matrix is loaded: `knn` defers to `vec0`."""
    cache = bookshop_index.store.vector_cache
    assert cache is not None
    assert not cache.wanted()
    vector = (await bookshop_index.embedder.embed(["hash a password"]))[0]
    assert await cache.knn(vector, 5) is None
    assert not cache.ready
    assert await bookshop_index.search("hash a password", limit=3)


async def test_a_large_cache_builds_its_first_pass_after_loading_and_growing(
    bookshop_index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thresholds lowered to the fixture's size: the load starts the build, it survives
    new vectors arriving, and rankings stay those of the exact product (the pass only
    proposes candidates; `tests/storage/test_pq_first_pass.py` covers its recall and
    the encoding of rows added later)."""
    from aistack_tui.knowledge import vector_cache
    from aistack_tui.storage import pq_first_pass

    exact = {q: await _matrix_after_load(bookshop_index, q) for q, _, _ in LABELLED[:5]}
    await bookshop_index.store.vector_cache.close()  # type: ignore[union-attr]
    bookshop_index.store.vector_cache._matrix = None  # type: ignore[union-attr]
    monkeypatch.setattr(vector_cache, "APPROXIMATE_MIN_ROWS", 0)
    monkeypatch.setattr(pq_first_pass, "MIN_ROWS", 16)
    cache = await _loaded_cache(bookshop_index)
    matrix = cache._matrix
    assert matrix is not None and matrix._first_pass is not None, "no first pass built"
    for question, ranking in exact.items():
        assert await _matrix(bookshop_index, question, 10) == ranking
    rows = len(matrix)
    (bookshop_index.project_root / "shop" / "extra.py").write_text(
        "def shipping_label(order):\n    return f'{order.id}: {order.address}'\n"
    )
    await bookshop_index.refresh()
    found = await _matrix(bookshop_index, "shipping label order address", 1)
    assert cache._matrix is matrix and len(matrix) > rows
    assert matrix._first_pass is not None, "the first pass was dropped by the update"
    chunk = await bookshop_index.store.chunk_rows(found)
    assert chunk[found[0]].path == "shop/extra.py"


async def _matrix_after_load(index: KnowledgeIndex, query: str) -> list[int]:
    await _loaded_cache(index)
    return await _matrix(index, query, 10)


async def test_turns_on_a_large_index_use_vectors_once_they_scale(
    bookshop_index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aistack_tui.knowledge import injection, vector_cache
    from aistack_tui.storage import pq_first_pass

    calls: list[bool] = []
    real = injection.hybrid_search

    async def spy(*args: object, use_vectors: bool = True, **kwargs: object) -> object:
        calls.append(use_vectors)
        return await real(*args, use_vectors=use_vectors, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(injection, "hybrid_search", spy)
    monkeypatch.setattr(injection, "TURN_VECTOR_MAX_CHUNKS", 10)  # "a large index"
    await bookshop_index.context_block("add a book to the basket", [], 2000)
    assert calls[-1] is False
    monkeypatch.setattr(vector_cache, "APPROXIMATE_MIN_ROWS", 0)
    monkeypatch.setattr(pq_first_pass, "MIN_ROWS", 16)
    cache = await _loaded_cache(bookshop_index)
    assert cache.scales
    await bookshop_index.context_block("add a book to the basket", [], 2000)
    assert calls[-1] is True
