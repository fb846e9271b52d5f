"""A code index file is created with 16 KB pages (cheaper big builds); an index made
before keeps its own page size and works as it did."""

from __future__ import annotations

from pathlib import Path

from aistack_tui.knowledge.store import PAGE_SIZE, IndexStore
from aistack_tui.storage.db import open_database


async def _page_size(path: Path) -> int:
    db, _ = await open_database(path)
    try:
        rows = await db.execute_fetchall("PRAGMA page_size")
        return int(next(iter(rows))[0])
    finally:
        await db.close()


async def test_a_new_index_gets_the_larger_pages(tmp_path: Path) -> None:
    store = await IndexStore.open(tmp_path / "index.db")
    await store.close()
    assert PAGE_SIZE == 16384
    assert await _page_size(tmp_path / "index.db") == PAGE_SIZE


async def test_an_older_index_keeps_its_pages_and_opens_as_before(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    db, _ = await open_database(path)  # SQLite's default pages, as indexes were made
    await db.execute("CREATE TABLE kept (x)")
    await db.execute("INSERT INTO kept VALUES (1)")
    await db.commit()
    await db.close()
    store = await IndexStore.open(path)
    try:
        assert [tuple(r) for r in await store.db.execute_fetchall("SELECT x FROM kept")] == [(1,)]
        assert await store.file_states() == {}  # the index's tables were made in it
    finally:
        await store.close()
    assert await _page_size(path) == 4096
