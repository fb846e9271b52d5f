"""Benchmark the code index: full-index throughput, incremental update, search and
per-turn context cost, against `ctags -R` on the same tree.

    python bench/knowledge_index.py [--tree PATH] [--synthetic 20000] [--quick] [--legacy-search]
    python bench/knowledge_index.py --repo-only [--repo 10000]

First a generated repository (`knowledge_tree.py`: 10,000 source files in a dozen
languages, plus vendored, minified, generated and huge files the index must skip), timed
against the floor of tree-sitter alone parsing the same files on the same cores, in the
same run (issue 26). Then, unless `--repo-only`, a copy of the running interpreter's
standard library (a copy, so the one-file update can edit it) and the synthetic tree of
tiny files. Everything runs in a temporary AISTACK_HOME. This is a benchmark, not a
test: it prints a table and the goals of issues 6 and 26 next to the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from aistack_tui.knowledge import KnowledgeIndex

sys.path.insert(0, str(Path(__file__).parent))
from knowledge_tree import generate_tree, parse_floor

QUERIES = [
    "parse an email address", "open a socket connection with timeout", "compress data with zlib",
    "read a csv file", "format a date as iso string", "walk a directory tree recursively",
    "json encoder for custom objects", "http request headers", "temporary file cleanup",
    "thread pool executor shutdown", "random number generator seed", "url quote unquote",
    "decode base64", "match a regular expression", "argument parser help message",
    "copy a file with metadata", "event loop run until complete", "logging handler rotate",
    "hash a password", "sqlite connection cursor", "subprocess pipe communicate",
    "unicode normalization", "tar archive extract", "zip file write", "pickle protocol",
    "decimal rounding", "fraction arithmetic", "heap push pop", "bisect insert sorted",
    "weak reference callback", "context manager exit", "abstract base class register",
    "dataclass field default factory", "enum auto value", "typing generic alias",
    "inspect function signature", "traceback format exception", "signal handler install",
    "queue get timeout", "shutil disk usage", "mime type guess", "html escape",
    "xml element tree parse", "locale currency format", "calendar month days",
    "string template substitute", "textwrap fill paragraph", "difflib unified diff",
    "statistics median", "uuid generate",
]  # fmt: skip


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _timed(fn: Callable[[], Awaitable[object]], runs: int) -> list[float]:
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _generate(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"pkg{i // 200:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module_{i:05d}.py").write_text(
            f'"""Synthetic module {i}."""\n\n'
            f"class Service{i}:\n"
            f'    """Handles request kind {i}."""\n\n'
            f"    def handle_{i}(self, payload):\n"
            f"        return process_{(i * 7 + 1) % files}(payload)\n\n\n"
            f"def process_{i}(payload):\n"
            f"    return [item for item in payload if item != {i}]\n"
        )


def _lines(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))


async def bench_tree(
    name: str, root: Path, home: Path, rows: list[tuple[str, str, str]]
) -> list[bytes]:
    """Bench one tree; returns its chunk vectors (int8 blobs) for `bench_vectors_at_scale`."""
    ctags = shutil.which("ctags")
    if ctags:
        start = time.perf_counter()
        subprocess.run([ctags, "-R", "-f", "/dev/null", "."], cwd=root, check=False,
                       capture_output=True)  # fmt: skip
        ctags_s = time.perf_counter() - start
        rows.append((f"{name}: ctags -R", f"{ctags_s:.2f} s", "reference"))
    else:
        ctags_s = 0.0
    index = await KnowledgeIndex.open(home, root)
    try:
        stats = await index.refresh()
        files, lines = stats.files_total, _lines(root)
        ready = stats.searchable_seconds
        rows.append((f"{name}: searchable (symbols, refs, FTS; {files} files)",
                     f"{ready:.2f} s", "≤ 3× ctags" if ctags_s else ""))  # fmt: skip
        await index.wait_for_graph()
        if stats.map_seconds:
            rows.append((f"{name}: + repo map (background)",
                         f"{stats.map_seconds:.2f} s after start", ""))  # fmt: skip
        rows.append((f"{name}: + vectors for {stats.chunks_total} chunks",
                     f"{stats.seconds:.2f} s total", ""))  # fmt: skip
        if ctags_s:
            rows.append((f"{name}: searchable / ctags, total / ctags",
                         f"{ready / ctags_s:.1f}×, {stats.seconds / ctags_s:.1f}×", "≤ 3×"))  # fmt: skip
        rows.append((f"{name}: throughput to searchable", f"{files / ready:.0f} files/s, "
                     f"{lines / ready:.0f} lines/s", "≥ 200 files/s"))  # fmt: skip
        rows.append((f"{name}: throughput incl. vectors",
                     f"{files / stats.seconds:.0f} files/s", "≥ 200 files/s"))  # fmt: skip
        noop = await index.refresh()
        rows.append((f"{name}: refresh, nothing changed", f"{noop.seconds * 1000:.0f} ms", ""))
        candidates = sorted(root.rglob("*.py"))
        target = candidates[min(7, len(candidates) - 1)]
        target.write_text(target.read_text() + "\n\ndef bench_added():\n    return 1\n")
        await index.wait_for_graph()
        one = await index.refresh_paths([target])
        rows.append((f"{name}: one-file update (refresh_paths)",
                     f"{one.seconds * 1000:.0f} ms", "< 200 ms"))  # fmt: skip
        target.write_text(target.read_text() + "\n\ndef bench_added_2():\n    return 2\n")
        await index.wait_for_graph()
        walked = await index.refresh()
        rows.append((f"{name}: one-file update (full walk)",
                     f"{walked.seconds * 1000:.0f} ms (parsed {walked.parsed})", ""))  # fmt: skip
        await index.wait_for_graph()
        queries = iter(QUERIES * 4)
        search = await _timed(lambda: index.search(next(queries), 10), len(QUERIES))
        cache = index.store.vector_cache
        how = "vec0" if cache is None or not cache.ready else "in-memory vectors"
        rows.append((f"{name}: search p50 / p95 ({how})",
                     f"{_p(search, 0.5):.1f} / {_p(search, 0.95):.1f} ms", "p95 < 30 ms"))  # fmt: skip
        if cache is not None and cache.wanted():
            await cache.wait_loaded()
            mb = cache.memory_bytes() / 1e6
            rows.append((f"{name}: vectors in memory ({cache.rows_hint} rows)",
                         f"{mb:.1f} MB, {mb * 10_000 / max(cache.rows_hint, 1):.1f} MB per 10k",
                         ""))  # fmt: skip
        turns = iter(QUERIES * 4)
        context = await _timed(
            lambda: index.context_block(next(turns), [target.relative_to(root).as_posix()], 4000),
            30,
        )
        rows.append((f"{name}: context_block p50 / p95",
                     f"{_p(context, 0.5):.1f} / {_p(context, 0.95):.1f} ms", "< 50 ms"))  # fmt: skip
        blobs = await index.store.db.execute_fetchall("SELECT embedding FROM chunk_vec")
        return [bytes(r[0]) for r in blobs]
    finally:
        await index.close()


async def bench_vectors_at_scale(
    blobs: list[bytes], total: int, rows: list[tuple[str, str, str]]
) -> None:
    """The vector leg of a search at a kernel-sized index: the tree's real chunk vectors
    repeated with small perturbations up to `total` rows, searched exactly and with the
    first pass (as `knowledge/vector_cache.py` does from `APPROXIMATE_MIN_ROWS`)."""
    import numpy as np

    from aistack_tui.storage.hashing_embedder import HashingEmbedder
    from aistack_tui.storage.vector_matrix import VectorMatrix

    if not blobs:
        return
    base = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1)
    rng = np.random.default_rng(1)
    copies = base[np.arange(total) % len(base)].astype(np.int16)
    copies += rng.integers(-3, 4, size=copies.shape, dtype=np.int16)
    data = np.clip(copies, -127, 127).astype(np.int8)
    del copies
    items = [(i, "c", data[i].tobytes()) for i in range(total)]
    matrices = {}
    for approximate in (False, True):
        matrix = VectorMatrix(data.shape[1], approximate=approximate, blob_type="int8")
        matrix.upsert(items)
        build = matrix.first_pass_due()
        started = time.perf_counter()
        if build is not None:
            matrix.install_first_pass(build, build.run())
        matrices[approximate] = (matrix, time.perf_counter() - started)
    del items
    embedder = HashingEmbedder(data.shape[1])
    vectors = embedder.embed_sync(QUERIES)
    timings: dict[bool, list[float]] = {False: [], True: []}
    found: dict[bool, list[set[int]]] = {False: [], True: []}
    for vector in vectors:
        for approximate, (matrix, _) in matrices.items():
            started = time.perf_counter()
            hits = matrix.search(vector, ["c"], 50)
            timings[approximate].append((time.perf_counter() - started) * 1000)
            found[approximate].append({item for item, _ in hits[:10]})
    recall = sum(len(a & e) for a, e in zip(found[True], found[False], strict=True)) / (
        10 * len(vectors))
    exact, approx = timings[False], timings[True]
    rows.append((f"{total:,} chunk vectors: exact product p50 / p95",
                 f"{_p(exact, 0.5):.1f} / {_p(exact, 0.95):.1f} ms", ""))  # fmt: skip
    rows.append((f"{total:,} chunk vectors: first pass p50 / p95 (recall@10)",
                 f"{_p(approx, 0.5):.1f} / {_p(approx, 0.95):.1f} ms ({recall:.3f}), "
                 f"built in {matrices[True][1]:.1f} s", "same cost as a small repo"))  # fmt: skip


async def _probe(index: KnowledgeIndex, delay: float) -> tuple[float, float]:
    """A turn's knowledge work during the first build: (context_block ms, worst event
    loop stall in ms over the build's first seconds)."""
    stall = 0.0
    deadline = time.perf_counter() + delay
    while time.perf_counter() < deadline:
        tick = time.perf_counter()
        await asyncio.sleep(0.01)
        stall = max(stall, (time.perf_counter() - tick - 0.01) * 1000)
    started = time.perf_counter()
    await index.context_block("where is the order cart price computed", [], 4000)
    return (time.perf_counter() - started) * 1000, stall


class WorkerCpu:
    """CPU seconds of this process's worker processes, polled from `/proc` (Linux; 0
    elsewhere) every 20 ms while running, so a pool shut down in between still counts
    (up to its last 20 ms)."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        self._task: asyncio.Task[None] | None = None

    def poll(self) -> float:
        tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        for child in multiprocessing.active_children():
            try:
                fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            self.seen[child.pid or 0] = (int(fields[11]) + int(fields[12])) / tick
        return sum(self.seen.values())

    async def _run(self) -> None:
        while True:
            self.poll()
            await asyncio.sleep(0.02)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def bench_repo_scale(
    work: Path, home: Path, sources: int, rows: list[tuple[str, str, str]]
) -> None:
    """Issue 26 goal 3 on a generated repository: time to searchable against the floor
    of tree-sitter alone parsing the same source files on the same cores, measured
    before and after the index in the same run; then a one-file update."""
    root = work / "repo"
    counts = generate_tree(root, sources)
    skipped = ", ".join(f"{n:,} {why}" for why, n in counts.skipped.items())
    rows.append((f"repo {sources:,}: generated", f"{counts.sources:,} sources, "
                 f"{counts.text} config, to skip: {skipped}", ""))  # fmt: skip
    cores = os.cpu_count() or 1
    floor_before, floor_cpu = parse_floor(root, counts.source_paths, cores)
    index = await KnowledgeIndex.open(home, root)
    try:
        probe = asyncio.get_running_loop().create_task(_probe(index, 1.5))
        workers = WorkerCpu()
        workers.start()
        cpu = time.process_time()
        at_searchable: list[tuple[float, float]] = []

        def on_phase(phase: str) -> None:
            # The first phase after "parsing" is reported the moment it is searchable.
            if phase not in ("scanning", "parsing") and not at_searchable:
                at_searchable.append((time.process_time() - cpu, workers.poll()))

        stats = await index.refresh(on_phase=on_phase)
        cpu = time.process_time() - cpu
        workers.stop()
        turn_ms, stall_ms = await probe
        floor_after, _ = parse_floor(root, counts.source_paths, cores)
        floor = (floor_before + floor_after) / 2
        ready = stats.searchable_seconds
        rows.append((f"repo {sources:,}: tree-sitter parse floor ({cores} processes)",
                     f"{floor_before:.2f} s before, {floor_after:.2f} s after "
                     f"({floor_cpu:.1f} CPU-s)", ""))  # fmt: skip
        rows.append((f"repo {sources:,}: searchable ({stats.files_total:,} files indexed)",
                     f"{ready:.2f} s = {ready / floor:.2f}× floor", "≤ 2× floor"))  # fmt: skip
        if at_searchable:
            main_cpu, workers_cpu = at_searchable[0]
            total = main_cpu + workers_cpu
            rows.append((f"repo {sources:,}: CPU until searchable (main + workers)",
                         f"{total:.1f} CPU-s = {total / floor_cpu:.2f}× the floor's CPU "
                         f"({main_cpu:.1f} + {workers_cpu:.1f})", ""))  # fmt: skip
        rows.append((f"repo {sources:,}: + vectors", f"{stats.seconds:.2f} s "
                     f"(main process {cpu:.1f} CPU-s)", ""))  # fmt: skip
        rows.append((f"repo {sources:,}: context_block 1.5 s into the first build",
                     f"{turn_ms:.0f} ms (event loop stalled ≤ {stall_ms:.0f} ms)",
                     "a turn never waits"))  # fmt: skip
        await index.wait_for_graph()
        if getattr(stats, "references_seconds", 0):
            rows.append((f"repo {sources:,}: + references (second pass), + repo map",
                         f"{stats.references_seconds:.2f} s, {stats.map_seconds:.2f} s",
                         ""))  # fmt: skip
        target = root / counts.source_paths[7][0]
        target.write_text(target.read_text() + "\n// edited by the bench\n")
        one = await index.refresh_paths([target])
        rows.append((f"repo {sources:,}: one-file update (refresh_paths)",
                     f"{one.seconds * 1000:.0f} ms", "< 200 ms"))  # fmt: skip
        target.write_text(target.read_text() + "\n// edited again\n")
        await index.wait_for_graph()
        walked = await index.refresh()
        rows.append((f"repo {sources:,}: one-file update (full walk, as the watcher)",
                     f"{walked.seconds * 1000:.0f} ms", ""))  # fmt: skip
    finally:
        await index.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tree", type=Path, help="tree to index (default: the stdlib)")
    parser.add_argument("--synthetic", type=int, default=20000, help="files in synthetic tree")
    parser.add_argument("--quick", action="store_true", help="2,000 synthetic files only")
    parser.add_argument("--repo", type=int, default=10_000,
                        help="source files in the generated repository (0: skip it)")
    parser.add_argument("--repo-only", action="store_true",
                        help="only the generated repository (issue 26's measure)")
    parser.add_argument("--scale-rows", type=int, default=1_000_000,
                        help="chunk vectors for the kernel-scale vector search row")
    parser.add_argument("--legacy-search", action="store_true",
                        help="search as before the in-memory vectors and bm25 narrowing"
                        " (a vec0 scan, every match scored), for before/after tables")  # fmt: skip
    args = parser.parse_args()
    if args.legacy_search:
        from aistack_tui.knowledge import search, vector_cache

        vector_cache.NUMPY_AVAILABLE = False
        search.NARROW_OVER = -1
    rows: list[tuple[str, str, str]] = []
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the start: {load} (other work on the machine slows every row)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.repo:
            await bench_repo_scale(work, work / "home", 1000 if args.quick else args.repo, rows)
        small = Path(__file__).resolve().parents[1] / "tests/knowledge/fixtures/bookshop"
        shutil.copytree(small, work / "small")
        if not args.repo_only:
            await bench_tree("small (bookshop)", work / "small", work / "home", rows)
        if not args.quick and not args.repo_only:
            source = args.tree or Path(sysconfig.get_paths()["stdlib"])
            shutil.copytree(source, work / "stdlib", ignore=shutil.ignore_patterns(
                "site-packages", "__pycache__"), symlinks=True)  # fmt: skip
            blobs = await bench_tree("stdlib", work / "stdlib", work / "home", rows)
            await bench_vectors_at_scale(blobs, args.scale_rows, rows)
        count = 2000 if args.quick else args.synthetic
        if not args.repo_only:
            _generate(work / "synthetic", count)
            await bench_tree(f"synthetic {count}", work / "synthetic", work / "home", rows)
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    print(f"{'measure':<{width}}  {'value':<{value_width}}  goal")
    print(f"{'-' * width}  {'-' * value_width}  ----")
    for label, value, goal in rows:
        print(f"{label:<{width}}  {value:<{value_width}}  {goal}")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nsingle runs; cores: {os.cpu_count()}; load average at the end: {load}")


if __name__ == "__main__":
    asyncio.run(main())
