"""Retrieval quality on a hand-labelled fixture: 209 memories, 52 queries.

The queries mix plain questions, other word forms, typos and split identifiers, so
neither bm25 alone (misses typos and compounds) nor the offline hashed vectors alone
(weak on rare exact terms among common words) is enough; the fusion has to beat both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aistack_tui.memory import vectors
from aistack_tui.memory.manager import MemoryManager

HERE = Path(__file__).parent


async def _recall_at_5(memory: MemoryManager, ids: dict[int, int], mode: str) -> float:
    queries = [json.loads(line) for line in
               (HERE / "fixture_queries.jsonl").read_text().splitlines() if line.strip()]
    assert len(queries) >= 40
    total = 0.0
    for query in queries:
        # Vector-only gets no similarity bar: it is measured at its best.
        hits = await memory.search_memories(
            query["q"], 5, mode=mode, min_similarity=0.0 if mode == "vector" else None
        )
        found = {ids[h.record.id] for h in hits if h.record is not None}
        total += len(found & set(query["rel"])) / len(query["rel"])
    return total / len(queries)


@pytest.mark.parametrize("index_path", ["vec0", "matrix"])
async def test_hybrid_recall_beats_fts_and_vectors(
    memory: MemoryManager, index_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both search paths of the vector index (vec0 KNN for small indexes, the in-process
    matrix from `MATRIX_MIN_ROWS` on) must give the same quality."""
    if index_path == "matrix":
        monkeypatch.setattr(vectors, "MATRIX_MIN_ROWS", 0)
    lines = [line for line in (HERE / "fixture_memories.txt").read_text().splitlines()
             if line.strip()]
    assert len(lines) >= 200
    ids: dict[int, int] = {}
    for number, line in enumerate(lines, start=1):
        record = await memory.write(line, source="fixture")
        ids[record.id] = number
    assert len(ids) == len(lines), "fixture lines must not merge as near-duplicates"

    fts = await _recall_at_5(memory, ids, "fts")
    vector = await _recall_at_5(memory, ids, "vector")
    hybrid = await _recall_at_5(memory, ids, "hybrid")
    print(f"\n[{index_path}] recall@5  fts={fts:.3f}  vector={vector:.3f}  hybrid={hybrid:.3f}")
    assert (memory.index._matrix is not None) == (index_path == "matrix")
    assert hybrid >= 0.9
    assert hybrid > fts
    assert hybrid > vector
