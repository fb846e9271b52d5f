"""A big build stores definitions, chunks and the full-text index first (searchable),
then the references in a second pass, then the repo map; small updates do all at once."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import sqlean  # type: ignore[import-untyped]

from aistack_tui.knowledge import KnowledgeIndex
from aistack_tui.knowledge.extract import extract
from aistack_tui.knowledge.indexer import INDEX_FILENAME
from aistack_tui.knowledge.pipeline import POOL_THRESHOLD
from aistack_tui.knowledge.store import (
    AUTOMERGE,
    CRISIS_MERGE,
    NO_CRISIS_MERGE,
    FileState,
    IndexStore,
    ParsedFile,
)
from aistack_tui.storage.paths import project_data_dir

FILES = POOL_THRESHOLD + 60


def _generate(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"pkg{i // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:04d}.py").write_text(
            f"def func_{i}(x):\n    return helper_{(i + 1) % count}(x)\n\n\n"
            f"def helper_{i}(y):\n    return shared_total(y) + {i}\n"
        )
    (root / "shared.py").write_text("def shared_total(value):\n    return value\n")


async def _pending(index: KnowledgeIndex) -> int:
    rows = await index.store.db.execute_fetchall(
        "SELECT COUNT(*) FROM files WHERE refs_pending = 1"
    )
    return int(next(iter(rows))[0])


async def _stored_refs(index: KnowledgeIndex) -> dict[str, tuple[tuple[str, int], ...]]:
    rows = await index.store.db.execute_fetchall(
        "SELECT f.path, r.name, r.count FROM refs r JOIN files f ON f.id = r.file_id"
        " ORDER BY f.path, r.name"
    )
    out: dict[str, list[tuple[str, int]]] = {}
    for path, name, count in rows:
        out.setdefault(str(path), []).append((str(name), int(count)))
    return {path: tuple(refs) for path, refs in out.items()}


async def _stored_symbols(index: KnowledgeIndex) -> dict[str, list[tuple[object, ...]]]:
    rows = await index.store.db.execute_fetchall(
        "SELECT f.path, s.name, s.qualname, s.kind, s.start_line, s.signature, s.doc"
        " FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY f.path, s.start_line"
    )
    out: dict[str, list[tuple[object, ...]]] = {}
    for path, *symbol in rows:
        out.setdefault(str(path), []).append(tuple(symbol))
    return out


async def test_a_big_build_is_searchable_before_its_references_are_in(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "big"
    _generate(root, FILES)
    index = await KnowledgeIndex.open(aistack_home, root)
    database = project_data_dir(aistack_home, root.resolve()) / INDEX_FILENAME
    states: list[tuple[int, int, int, int]] = []
    answers: list[tuple[list[str], str]] = []

    async def ask() -> None:
        hits = await index.search("func_237", limit=3)
        block = await index.context_block("what does helper_123 return", [], 4000)
        answers.append(([h.path for h in hits], block))

    asked: list[asyncio.Task[None]] = []

    def on_phase(phase: str) -> None:
        if phase != "ranking" or asked:
            return
        # The moment the reference pass starts, read from a second connection (what
        # any reader sees): every chunk is in the full-text index, no reference yet.
        connect = sqlean.connect  # pyright: ignore[reportAttributeAccessIssue]
        with contextlib.closing(connect(database)) as db:
            pending = db.execute("SELECT COUNT(*) FROM files WHERE refs_pending = 1")
            refs = db.execute("SELECT COUNT(*) FROM refs")
            signed = db.execute("SELECT COUNT(*) FROM symbols WHERE signature != ''")
            found = db.execute("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH 'func_237'")
            states.append((pending.fetchone()[0], refs.fetchone()[0], found.fetchone()[0],
                           signed.fetchone()[0]))  # fmt: skip
        asked.append(asyncio.get_running_loop().create_task(ask()))

    try:
        stats = await index.refresh(on_phase=on_phase)
        await asyncio.gather(*asked)
        assert states == [(FILES + 1, 0, 1, 0)]
        [(paths, block)] = answers
        assert paths[0] == "pkg02/mod0237.py"
        assert "pkg01/mod0123.py" in block and "def helper_123" in block
        assert stats.files_total == FILES + 1
        assert 0 < stats.searchable_seconds <= stats.references_seconds
    finally:
        await index.close()


async def test_the_repo_map_fills_after_the_reference_pass(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "big"
    _generate(root, FILES)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        stats = await index.refresh()
        await index.wait_for_graph()
        assert await _pending(index) == 0
        assert stats.map_seconds >= stats.references_seconds >= stats.searchable_seconds > 0
        # The same references one pass finds, file by file.
        stored = await _stored_refs(index)
        symbols = await _stored_symbols(index)
        for path in ("shared.py", "pkg00/mod0005.py", f"pkg02/mod{FILES - 1:04d}.py"):
            whole = extract((root / path).read_bytes(), "python")
            assert stored.get(path, ()) == whole.references
            # The definitions' signatures and docs, left out of the first pass, too.
            assert symbols[path] == [
                (d.name, d.qualname, d.kind, d.start_line, d.signature, d.doc)
                for d in whole.definitions
            ]
            assert all(signature for _, _, _, _, signature, _ in symbols[path])
        graph = index.graph
        assert graph is not None and len(graph.paths) == FILES + 1
        mod5, mod6 = graph.ids_by_path["pkg00/mod0005.py"], graph.ids_by_path["pkg00/mod0006.py"]
        assert mod6 in graph.out[mod5]  # func_5 calls helper_6
        block = await index.context_block("helper", ["pkg00/mod0005.py"], 4000)
        assert "Repository map" in block and "shared.py" in block
    finally:
        await index.close()


async def test_a_one_file_update_after_a_big_build_takes_the_one_pass_path(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "big"
    _generate(root, FILES)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        await index.wait_for_graph()
        target = root / "pkg00" / "mod0009.py"
        target.write_text("def edited(x):\n    return shared_total(x) + func_3(x)\n")
        started = time.perf_counter()
        one = await index.refresh_paths([target])
        elapsed = time.perf_counter() - started
        assert one.parsed == 1 and one.references_seconds == 0  # no second pass
        assert await _pending(index) == 0
        assert (await _stored_refs(index))["pkg00/mod0009.py"] == (
            ("func_3", 1), ("shared_total", 1)
        )  # fmt: skip
        assert elapsed < 2.0  # in a thread, no pool: tens of ms (the bench measures it)
        await index.wait_for_graph()
        graph = index.graph
        assert graph is not None
        edited, shared = graph.ids_by_path["pkg00/mod0009.py"], graph.ids_by_path["shared.py"]
        assert shared in graph.out[edited]
    finally:
        await index.close()


async def test_a_file_rewritten_meanwhile_keeps_its_own_references(tmp_path: Path) -> None:
    """The second pass's late result for old content must not land on new content."""
    store = await IndexStore.open(tmp_path / "index.db")
    try:
        source = b"def a():\n    return helper_b()\n"
        deferred = extract(source, "python", references=False)
        assert deferred.references_pending and deferred.references == ()
        states: dict[str, FileState] = {}
        await store.write([ParsedFile("a.py", len(source), 1, "old", deferred)], states)
        [(file_id, path, language, known)] = await store.pending_references()
        assert (path, language, known) == ("a.py", "python", "old")

        edited = b"def a():\n    return helper_c()\n"
        whole = extract(edited, "python")
        await store.write([ParsedFile("a.py", len(edited), 2, "new", whole)], states)
        assert await store.store_references([(file_id, "old", (("helper_b", 1),), ())]) == 0
        rows = await store.db.execute_fetchall(
            "SELECT name FROM refs WHERE file_id = ?", (file_id,)
        )
        assert [str(r[0]) for r in rows] == ["helper_c"]
        assert await store.pending_references() == []
    finally:
        await store.close()


async def test_a_big_build_without_references_still_ranks_its_map(
    tmp_path: Path, aistack_home: Path
) -> None:
    """Plain-text files owe no second pass; the map is rebuilt all the same."""
    for i in range(FILES):
        (tmp_path / f"notes{i:03d}.txt").write_text(f"note number {i}\n")
    index = await KnowledgeIndex.open(aistack_home, tmp_path)
    try:
        stats = await index.refresh()
        assert stats.parsed == FILES and stats.references_seconds == 0
        await index.wait_for_graph()
        assert index.graph is not None and len(index.graph.paths) == FILES
    finally:
        await index.close()


async def _fts_settings(index: KnowledgeIndex) -> tuple[int, int]:
    """FTS5's `automerge` and `crisismerge` as stored (its defaults when never set)."""
    rows = await index.store.db.execute_fetchall(
        "SELECT k, v FROM chunks_fts_config WHERE k IN ('automerge', 'crisismerge')"
    )
    stored = {str(k): int(v) for k, v in rows}
    return stored.get("automerge", AUTOMERGE), stored.get("crisismerge", CRISIS_MERGE)


async def _segments(index: KnowledgeIndex) -> int:
    """How many b-tree segments the full-text index is made of now."""
    rows = await index.store.db.execute_fetchall("SELECT COUNT(DISTINCT segid) FROM chunks_fts_idx")
    return int(next(iter(rows))[0])


async def test_a_big_build_writes_segments_unmerged_and_merges_them_afterwards(
    tmp_path: Path, aistack_home: Path
) -> None:
    """During a big build nothing is merged: each write group stays one segment (merging
    them then cost a quarter of the full-text CPU before the index was searchable).
    `merge_segments` merges them afterwards, and restores the settings that keep later
    edits merging as they go."""
    root = tmp_path / "big"
    _generate(root, 120)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        store = index.store
        await store.bulk_mode(True)
        assert await _fts_settings(index) == (0, NO_CRISIS_MERGE)
        states: dict[str, FileState] = {}
        groups = 24  # more than `crisismerge`'s default: FTS5 would have merged them
        assert groups > CRISIS_MERGE
        for g in range(groups):
            parsed = []
            for i in range(g * 5, g * 5 + 5):
                rel = f"pkg{i // 100:02d}/mod{i:04d}.py"
                source = (root / rel).read_bytes()
                parsed.append(ParsedFile(rel, len(source), 1, f"h{i}", extract(source, "python")))
            await store.write(parsed, states)
        assert await _segments(index) == groups
        await store.bulk_mode(False)
        assert await _fts_settings(index) == (AUTOMERGE, NO_CRISIS_MERGE)
        assert await store.merge_owed()
        assert await store.merge_segments(closed=lambda: False)
        assert await _segments(index) < AUTOMERGE
        assert await _fts_settings(index) == (AUTOMERGE, CRISIS_MERGE)
        assert not await store.merge_owed()
        hits = await index.search("func_7", limit=1)
        assert hits and hits[0].path.endswith("mod0007.py")
        assert (await index.search("helper_119", limit=1))[0].path.endswith("mod0119.py")
    finally:
        await index.close()


async def test_a_big_build_leaves_the_full_text_index_merged(
    tmp_path: Path, aistack_home: Path
) -> None:
    """A whole big build, as a user's first index: by the end of its refresh the write
    groups' segments are merged and FTS5's own merge settings are back."""
    root = tmp_path / "big"
    _generate(root, FILES)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        assert await _fts_settings(index) == (AUTOMERGE, CRISIS_MERGE)
        assert await _segments(index) < AUTOMERGE
        assert (await index.search("func_237", limit=1))[0].path.endswith("mod0237.py")
    finally:
        await index.close()


async def test_a_merge_left_by_a_closed_session_is_done_by_the_next_refresh(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "big"
    _generate(root, 40)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        await index.store.bulk_mode(True)  # and the session ends inside the build
        assert await index.store.merge_owed()
        (root / "pkg00/mod0003.py").write_text("def renamed_func(x):\n    return x\n")
        await index.refresh()
        assert not await index.store.merge_owed()
        assert await _fts_settings(index) == (AUTOMERGE, CRISIS_MERGE)
        assert (await index.search("renamed_func", limit=1))[0].path.endswith("mod0003.py")
    finally:
        await index.close()
