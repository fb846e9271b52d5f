"""Walking a project: ignore files, vendored folders, binaries and huge files."""

from __future__ import annotations

from pathlib import Path

from aistack_tui.knowledge import KnowledgeIndex
from aistack_tui.knowledge.walker import MAX_FILE_BYTES, walk


def _write(root: Path, rel: str, content: str | bytes = "x = 1\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


def test_walk_honours_gitignore_aistackignore_and_skip_lists(tmp_path: Path) -> None:
    _write(tmp_path, ".gitignore", "*_gen.py\n/generated/\n!keep_gen.py\n")
    _write(tmp_path, ".aistackignore", "secret_stuff/\n")
    _write(tmp_path, "src/app.py")
    _write(tmp_path, "src/.gitignore", "local_*.py\n")
    _write(tmp_path, "src/local_scratch.py")
    _write(tmp_path, "drop_gen.py")
    _write(tmp_path, "keep_gen.py")
    _write(tmp_path, "generated/out.py")
    _write(tmp_path, "secret_stuff/a.py")
    _write(tmp_path, "node_modules/lib/index.js", "module.exports = 1\n")
    _write(tmp_path, "venv2/pyvenv.cfg", "home = /usr\n")
    _write(tmp_path, "venv2/lib/site.py")
    _write(tmp_path, "image.png", b"\x89PNG")
    _write(tmp_path, "huge.py", "#" * (MAX_FILE_BYTES + 1))
    _write(tmp_path, "app.min.js", "var a=1")
    _write(tmp_path, "README.md", "# hi\n")
    found = sorted(e.path for e in walk(tmp_path))
    assert found == ["README.md", "keep_gen.py", "src/app.py"]


async def test_binary_file_with_code_extension_is_skipped(
    tmp_path: Path, aistack_home: Path
) -> None:
    _write(tmp_path, "real.py", "def real():\n    pass\n")
    _write(tmp_path, "fake.py", b"\x00\x01\x02binary")
    index = await KnowledgeIndex.open(aistack_home, tmp_path)
    try:
        stats = await index.refresh()
        assert stats.parsed == 1 and stats.skipped == 1
    finally:
        await index.close()


async def test_opening_a_missing_directory_is_a_clear_error(
    tmp_path: Path, aistack_home: Path
) -> None:
    import pytest

    with pytest.raises(NotADirectoryError, match="not a directory"):
        await KnowledgeIndex.open(aistack_home, tmp_path / "nope")


def test_a_walk_split_between_workers_finds_each_file_once(tmp_path: Path) -> None:
    """A first build walks in every worker of its pool, each checking the files of its
    share of the directories: together they must be the whole walk, with no file twice
    and the ignore rules of every share's parents still applied."""
    _write(tmp_path, ".gitignore", "*_gen.py\n")
    for i in range(12):
        _write(tmp_path, f"pkg{i}/mod.py")
        _write(tmp_path, f"pkg{i}/deep/{i}/leaf.py")
        _write(tmp_path, f"pkg{i}/drop_gen.py")
    _write(tmp_path, "top.py")
    whole = sorted(e.path for e in walk(tmp_path))
    shares = [sorted(e.path for e in walk(tmp_path, part, 3)) for part in range(3)]
    assert all(shares)  # 37 directories: each share holds some
    assert sorted(p for share in shares for p in share) == whole
    assert len(whole) == 25 and not any(p.endswith("_gen.py") for p in whole)


async def test_a_pool_walk_is_the_whole_walk(tmp_path: Path) -> None:
    from aistack_tui.knowledge.pipeline import build_pool, walk_in_worker

    for i in range(30):
        _write(tmp_path, f"d{i}/f{i}.py")
    pool = await build_pool(2)
    assert pool is not None
    try:
        found = await walk_in_worker(str(tmp_path), pool, 2)
    finally:
        pool.shutdown()
    assert found is not None
    assert sorted(found, key=lambda e: e.path) == sorted(walk(tmp_path), key=lambda e: e.path)
