"""Incremental indexing: only files whose content changed are parsed again."""

from __future__ import annotations

import os
from pathlib import Path

from aistack_tui.knowledge import KnowledgeIndex


def _generate(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"pkg{i // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:04d}.py").write_text(
            f"def func_{i}(x):\n    return helper_{(i + 1) % count}(x)\n\n\n"
            f"def helper_{i}(y):\n    return y + {i}\n"
        )


async def test_editing_one_file_in_2000_reindexes_only_that_file(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "big"
    _generate(root, 2000)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        first = await index.refresh()
        assert first.files_seen == 2000 and first.parsed == 2000
        assert first.symbols_total == 4000
        # A big build is searchable before the repo map is ranked: the graph follows
        # in the background and records when it was ready.
        await index.wait_for_graph()
        assert index.graph is not None and len(index.graph.paths) == 2000
        assert first.map_seconds >= first.searchable_seconds > 0
        mod5 = index.graph.ids_by_path["pkg00/mod0005.py"]
        mod6 = index.graph.ids_by_path["pkg00/mod0006.py"]
        assert mod6 in index.graph.out[mod5]  # func_5 calls helper_6

        target = root / "pkg07" / "mod0777.py"
        target.write_text("def renamed_function(x):\n    return x * 2\n")
        second = await index.refresh()
        assert second.parsed == 1
        assert second.parsed_paths == ["pkg07/mod0777.py"]
        assert second.unchanged == 1999
        assert second.symbols_total == 3999
        hits = await index.search("renamed_function", limit=3)
        assert hits[0].path == "pkg07/mod0777.py"
        old_hits = await index.search("helper_777", limit=10)
        assert all(h.path != "pkg07/mod0777.py" for h in old_hits)

        third = await index.refresh()
        assert third.parsed == 0 and third.unchanged == 2000
    finally:
        await index.close()


async def test_touched_file_with_same_content_is_not_reparsed(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "small"
    _generate(root, 5)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        path = root / "pkg00" / "mod0001.py"
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
        stats = await index.refresh()
        assert (stats.parsed, stats.touched) == (0, 1)
    finally:
        await index.close()


async def test_deleted_files_leave_the_index(tmp_path: Path, aistack_home: Path) -> None:
    root = tmp_path / "small"
    _generate(root, 5)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        (root / "pkg00" / "mod0002.py").unlink()
        stats = await index.refresh()
        assert stats.removed == 1 and stats.files_total == 4
        assert not [h for h in await index.search("helper_2", 10) if h.path.endswith("0002.py")]
    finally:
        await index.close()


async def test_refresh_paths_updates_one_file_without_walking(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "small"
    _generate(root, 5)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        target = root / "pkg00" / "mod0003.py"
        target.write_text("class FreshlyWritten:\n    pass\n")
        stats = await index.refresh_paths([target, "does/not/exist.py"])
        assert stats.parsed_paths == ["pkg00/mod0003.py"]
        assert (await index.search("FreshlyWritten", 1))[0].path == "pkg00/mod0003.py"
    finally:
        await index.close()


async def test_index_survives_reopening(tmp_path: Path, aistack_home: Path) -> None:
    root = tmp_path / "small"
    _generate(root, 5)
    index = await KnowledgeIndex.open(aistack_home, root)
    await index.refresh()
    await index.close()
    again = await KnowledgeIndex.open(aistack_home, root)
    try:
        stats = await again.refresh()
        assert stats.parsed == 0 and stats.unchanged == 5
        assert (aistack_home / "projects").is_dir()
    finally:
        await again.close()


async def test_a_burst_of_edits_costs_one_repo_map_rebuild(
    tmp_path: Path, aistack_home: Path
) -> None:
    """Small updates rebuild the map after a short pause, once for a burst of edits."""
    root = tmp_path / "small"
    _generate(root, 20)
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        await index.wait_for_graph()
        before = index.graph
        assert before is not None
        for name in ("a", "b", "c"):
            (root / f"{name}.py").write_text(f"def {name}_fn():\n    return helper_3(1)\n")
            await index.refresh_paths([root / f"{name}.py"])
        assert index.graph is before  # not rebuilt yet: the debounce is still running
        await index.wait_for_graph()
        after = index.graph
        assert after is not None and after is not before
        assert {"a.py", "b.py", "c.py"} <= set(after.ids_by_path)
        helper = after.ids_by_path["pkg00/mod0003.py"]
        assert all(helper in after.out[after.ids_by_path[f"{n}.py"]] for n in "abc")
    finally:
        await index.close()
