"""Memory retrieval latency at 10k and 100k memories with the offline embedder.

    python bench/memory_retrieval.py [--sizes 10000,100000] [--queries 50]

For each size it fills a fresh database (bulk inserts in large transactions, skipping the
per-write duplicate check that a benchmark fill does not need), then reports p50 / p95 of:

- `hybrid`: `MemoryManager.search_memories` end to end (query embedding, bm25, quantised
  KNN with float re-scoring, RRF, weighting, row fetch);
- `quantised knn`: the bit-vector vec0 KNN + float re-scoring alone;
- the floor, on the same data in the same run: a bare FTS5 bm25 top-10 and a bare
  `vec0 float[384]` KNN k=10 (brute force, what the quantised index replaces);
- `recall@10` of the quantised KNN against that exact float KNN, so a faster index that
  finds the wrong neighbours shows up here rather than passing as a win.

Goal (DESIGN.md §10): hybrid p95 under 20 ms at 100k.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aistack_tui.memory.manager import MemoryManager  # noqa: E402
from aistack_tui.memory.retrieval import fts_or_query  # noqa: E402
from aistack_tui.memory.store import normalise  # noqa: E402
from aistack_tui.storage.hashing_embedder import HashingEmbedder, serialize_f32  # noqa: E402

FIXTURE = ROOT / "tests" / "memory" / "fixture_memories.txt"


def vocabulary() -> list[str]:
    words = sorted({w for w in normalise(FIXTURE.read_text()).split() if len(w) > 2})
    rng = random.Random(7)
    # Invented words widen the vocabulary to something like a real project's.
    extra = ["".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3))
             for _ in range(3000)]
    return words + extra


def sentences(n: int, seed: int) -> list[str]:
    vocab = vocabulary()
    rng = random.Random(seed)
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 16))) for _ in range(n)]


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


async def fill(manager: MemoryManager, texts: list[str], embedder: HashingEmbedder) -> None:
    db = manager.store.db
    now = time.time()
    batch = 2000
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        vectors = embedder.embed_sync(chunk)

        async def work(chunk: list[str] = chunk, vectors: list[list[float]] = vectors) -> None:
            for text, vector in zip(chunk, vectors, strict=True):
                cur = await db.execute(
                    "INSERT INTO memories(kind, content, norm, project, source, importance,"
                    " created_at, updated_at) VALUES ('semantic', ?, ?, ?, 'bench', 0.5, ?, ?)",
                    (text, normalise(text), manager.project, now, now),
                )
                assert cur.lastrowid is not None
                await manager.index.upsert(cur.lastrowid, manager.project, vector)

        await manager.store.write(work)


async def bench_size(size: int, n_queries: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="aistack-bench-"))
    project = home / "project"
    project.mkdir()
    embedder = HashingEmbedder()
    manager = await MemoryManager.open(home, project, embedder, background=False)
    try:
        started = time.perf_counter()
        await fill(manager, sentences(size, seed=size), embedder)
        print(f"\n{size} memories filled in {time.perf_counter() - started:.1f} s")
        queries = [" ".join(s.split()[:4]) for s in sentences(n_queries, seed=1)]
        db = manager.store.db
        # The floor: a float vec0 table over the very same vectors.
        await db.execute("CREATE VIRTUAL TABLE bench_float USING vec0(embedding float[384])")
        await db.execute(
            "INSERT INTO bench_float(rowid, embedding) SELECT item_id, vector FROM memory_vectors"
        )
        await db.commit()
        timings: dict[str, list[float]] = {k: [] for k in
                                           ("hybrid", "quantised knn", "fts5 bm25", "vec0 float")}
        scopes = [manager.project, ""]
        recalls: list[float] = []
        for query in queries:
            vector = embedder.embed_sync([query])[0]
            t = time.perf_counter()
            await manager.search_memories(query, 10)
            timings["hybrid"].append(time.perf_counter() - t)
            t = time.perf_counter()
            approx = await manager.index.knn(vector, scopes, 10)
            timings["quantised knn"].append(time.perf_counter() - t)
            t = time.perf_counter()
            cur = await db.execute(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
                " ORDER BY bm25(memories_fts) LIMIT 10", (fts_or_query(query),))
            await cur.fetchall()
            timings["fts5 bm25"].append(time.perf_counter() - t)
            t = time.perf_counter()
            cur = await db.execute(
                "SELECT rowid FROM bench_float WHERE embedding MATCH ? AND k = 10",
                (serialize_f32(vector),))
            exact = {int(row[0]) for row in await cur.fetchall()}
            timings["vec0 float"].append(time.perf_counter() - t)
            recalls.append(len(exact & {i for i, _ in approx}) / max(len(exact), 1))
        for name, samples in timings.items():
            print(f"  {name:14} p50 {pct(samples, 0.5):7.2f} ms   p95 {pct(samples, 0.95):7.2f} ms"
                  f"   mean {statistics.fmean(samples) * 1000:7.2f} ms")
        print(f"  quantised knn recall@10 vs exact float KNN: {statistics.fmean(recalls):.3f}")
    finally:
        await manager.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        await bench_size(size, args.queries)


if __name__ == "__main__":
    asyncio.run(main())
