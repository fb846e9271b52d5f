"""Memory retrieval latency at 10k and 100k memories with the offline embedder.

    python bench/memory_retrieval.py [--sizes 10000,100000] [--queries 200]

For each size it fills a fresh database (bulk inserts of rows and float vectors in large
transactions, skipping the per-write duplicate check that a benchmark fill does not
need), re-opens it as a user's next start would (building the `vec0` index), times the
first search after opening (it loads the in-process vector matrix), then reports p50 /
p95 over the queries of:

- `hybrid`: `MemoryManager.search_memories` end to end (query embedding, bm25 and vector
  KNN run concurrently, RRF, weighting, row fetch);
- `vector knn`: `VectorIndex.knn` alone, the path hybrid uses (the in-process float32
  matrix from 5k rows when numpy is installed, with its change-log check per query);
- `vec0 index knn`: the same index searched through its partitioned float `vec0` table
  (the path without numpy);
- the floor, on the same data in the same run: a bare FTS5 bm25 top-10 and a bare
  `vec0 float[384]` KNN k=10 (brute force);
- `recall@10` of `vector knn` against that exact float KNN, so a faster index that finds
  the wrong neighbours shows up here rather than passing as a win.

The paths take turns in blocks of 25 queries (see `BLOCK`), so they share the host's
noise without every hybrid query following a 150 MB brute-force scan.

Goal (docs/benchmarks.md): hybrid p95 under 20 ms at 100k.
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
from aistack_tui.memory.vectors import VectorIndex  # noqa: E402
from aistack_tui.storage.hashing_embedder import HashingEmbedder, serialize_f32  # noqa: E402

FIXTURE = ROOT / "tests" / "memory" / "fixture_memories.txt"
BLOCK = 25
"""Queries each path runs in a row before the next path takes over."""


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
    """Bulk rows and float vectors; the `vec0` index is built by `ensure` on re-open."""
    db = manager.store.db
    now = time.time()
    batch = 5000
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        vectors = embedder.embed_sync(chunk)

        async def work(chunk: list[str] = chunk, vectors: list[list[float]] = vectors) -> None:
            cur = await db.execute("SELECT COALESCE(MAX(id), 0) FROM memories")
            first = int((await cur.fetchone() or (0,))[0]) + 1
            await db.executemany(
                "INSERT INTO memories(id, kind, content, norm, project, source, importance,"
                " created_at, updated_at) VALUES (?, 'semantic', ?, ?, ?, 'bench', 0.5, ?, ?)",
                [(first + i, text, normalise(text), manager.project, now, now)
                 for i, text in enumerate(chunk)],
            )
            await db.executemany(
                "INSERT INTO memory_vectors(item_id, embedder, vector) VALUES (?, ?, ?)",
                [(first + i, embedder.name, serialize_f32(v)) for i, v in enumerate(vectors)],
            )

        await manager.store.write(work)


def report(name: str, samples: list[float]) -> None:
    print(f"  {name:16} p50 {pct(samples, 0.5):7.2f} ms   p95 {pct(samples, 0.95):7.2f} ms"
          f"   mean {statistics.fmean(samples) * 1000:7.2f} ms")


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
    finally:
        await manager.close()
    # Re-open as a session would: `ensure` builds the float vec0 index, then the vector
    # matrix and its first pass load in the background while searches use vec0.
    started = time.perf_counter()
    manager = await MemoryManager.open(home, project, embedder)
    print(f"  re-open (builds the vec0 index): {time.perf_counter() - started:.1f} s")
    try:
        queries = [" ".join(s.split()[:4]) for s in sentences(n_queries, seed=1)]
        db = manager.store.db
        started = time.perf_counter()
        await manager.search_memories("warm up the first search", 10)
        print(f"  first search after open (vec0 while the matrix loads):"
              f" {(time.perf_counter() - started) * 1000:.0f} ms")
        await manager.index.wait_loaded()
        await manager.wait_idle()
        print(f"  matrix and first pass ready {time.perf_counter() - started:.1f} s after it")
        # The floor: a plain float vec0 table over the very same vectors, no partitions.
        await db.execute("CREATE VIRTUAL TABLE bench_float USING vec0(embedding float[384])")
        await db.execute(
            "INSERT INTO bench_float(rowid, embedding) SELECT item_id, vector FROM memory_vectors"
        )
        await db.commit()
        fallback = VectorIndex(db, prefix="memory", embedder_name=embedder.name,
                               dim=embedder.dim, vec_enabled=True, use_matrix=False)
        scopes = [manager.project, ""]
        approx_found: dict[str, set[int]] = {}
        exact_found: dict[str, set[int]] = {}

        async def hybrid(query: str, vector: list[float]) -> None:
            await manager.search_memories(query, 10)

        async def vector_knn(query: str, vector: list[float]) -> None:
            found = await manager.index.knn(vector, scopes, 10)
            approx_found[query] = {i for i, _ in found}

        async def vec0_index_knn(query: str, vector: list[float]) -> None:
            await fallback.knn(vector, scopes, 10)

        async def fts5_bm25(query: str, vector: list[float]) -> None:
            cur = await db.execute(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
                " ORDER BY bm25(memories_fts) LIMIT 10", (fts_or_query(query),))
            await cur.fetchall()

        async def vec0_float(query: str, vector: list[float]) -> None:
            cur = await db.execute(
                "SELECT rowid FROM bench_float WHERE embedding MATCH ? AND k = 10",
                (serialize_f32(vector),))
            exact_found[query] = {int(row[0]) for row in await cur.fetchall()}

        paths = {"hybrid": hybrid, "vector knn": vector_knn, "vec0 index knn": vec0_index_knn,
                 "fts5 bm25": fts5_bm25, "vec0 float": vec0_float}
        timings: dict[str, list[float]] = {name: [] for name in paths}
        vectors = embedder.embed_sync(queries)
        # Each path runs a block of queries in turn: interleaved blocks share the host's
        # noise fairly, while a 150 MB brute-force scan does not evict the caches right
        # before every hybrid query (nothing does that between two searches in real use).
        for start in range(0, len(queries), BLOCK):
            block = list(zip(queries[start : start + BLOCK], vectors[start : start + BLOCK],
                             strict=True))
            for name, run in paths.items():
                for query, vector in block:
                    t = time.perf_counter()
                    await run(query, vector)
                    timings[name].append(time.perf_counter() - t)
        recalls = [len(exact_found[q] & approx_found[q]) / max(len(exact_found[q]), 1)
                   for q in queries]
        path = "in-process matrix" if manager.index._matrix is not None else "vec0 index"
        print(f"  vector knn path: {path}")
        for name, samples in timings.items():
            report(name, samples)
        print(f"  vector knn recall@10 vs exact float KNN: {statistics.fmean(recalls):.3f}")
    finally:
        await manager.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        await bench_size(size, args.queries)


if __name__ == "__main__":
    asyncio.run(main())
