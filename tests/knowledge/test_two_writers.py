"""Two indexers writing one project's index (the TUI's watcher and `aistack index`).

Row ids are allocated by the store, not by SQLite, so a writer whose idea of the next id
is stale must not reuse another writer's ids, and a file the other writer just added
must be replaced, not inserted a second time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from aistack_tui.knowledge import KnowledgeIndex
from aistack_tui.knowledge.extract import extract
from aistack_tui.knowledge.store import ParsedFile


def _module(root: Path, name: str, function: str) -> Path:
    path = root / name
    path.write_text(f"def {function}(value):\n    return value + 1\n")
    return path


async def _stored(index: KnowledgeIndex) -> dict[str, list[str]]:
    rows = await index.store.db.execute_fetchall(
        "SELECT f.path, s.name FROM files f LEFT JOIN symbols s ON s.file_id = f.id"
        " ORDER BY f.path, s.name"
    )
    found: dict[str, list[str]] = {}
    for path, name in rows:
        found.setdefault(str(path), []).extend([str(name)] if name else [])
    return found


async def test_stale_writers_neither_reuse_ids_nor_duplicate_files(
    tmp_path: Path, aistack_home: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    _module(root, "a.py", "alpha_function")
    first = await KnowledgeIndex.open(aistack_home, root)
    await first.refresh()
    second = await KnowledgeIndex.open(aistack_home, root)  # knows the same next ids
    try:
        await first.refresh_paths([_module(root, "b.py", "bravo_function")])
        await second.refresh_paths([_module(root, "c.py", "charlie_function")])

        # The second writer read the file states before the first one added d.py.
        stale_states = await second.store.file_states()
        d_path = _module(root, "d.py", "delta_function")
        await first.refresh_paths([d_path])
        data = d_path.read_bytes()
        parsed = ParsedFile("d.py", len(data), d_path.stat().st_mtime_ns, "fresh-hash",
                            extract(data, "python"))  # fmt: skip
        await second.store.write([parsed], stale_states)

        expected = {
            "a.py": ["alpha_function"],
            "b.py": ["bravo_function"],
            "c.py": ["charlie_function"],
            "d.py": ["delta_function"],
        }
        assert await _stored(first) == expected
        hashes = await first.store.db.execute_fetchall("SELECT hash FROM files WHERE path = 'd.py'")
        assert [r[0] for r in hashes] == ["fresh-hash"]  # replaced, not inserted twice
        (orphans,) = (await first.store.db.execute_fetchall(
            "SELECT COUNT(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)"))[0]  # fmt: skip
        assert orphans == 0
        for index in (first, second):
            for word in ("bravo_function", "charlie_function", "delta_function"):
                hits = await index.search(word, limit=3)
                assert hits and hits[0].symbol == word, (word, hits)
    finally:
        await second.close()
        await first.close()


async def test_vectors_and_a_file_written_at_once_on_one_connection(
    tmp_path: Path, aistack_home: Path
) -> None:
    """The embedding loop runs outside the refresh lock, so a targeted update can write
    while it stores vectors: the two must not share (or break) one transaction."""
    root = tmp_path / "proj"
    root.mkdir()
    _module(root, "a.py", "alpha_function")
    index = await KnowledgeIndex.open(aistack_home, root)
    try:
        await index.refresh()
        store = index.store
        await store.db.execute("UPDATE chunks SET embedded = 0")
        await store.db.execute("DELETE FROM chunk_vec")
        await store.db.commit()
        pending = await store.pending_embeddings(100)
        vectors = [(cid, vec) for (cid, _), vec in
                   zip(pending, await index.embedder.embed([t for _, t in pending]), strict=True)]  # fmt: skip
        from aistack_tui.storage.hashing_embedder import serialize_f32

        e_path = _module(root, "e.py", "echo_function")
        data = e_path.read_bytes()
        parsed = ParsedFile("e.py", len(data), e_path.stat().st_mtime_ns, "e-hash",
                            extract(data, "python"))  # fmt: skip
        await asyncio.gather(
            store.store_vectors([(cid, serialize_f32(v)) for cid, v in vectors]),
            store.write([parsed], {}),
        )
        assert await store.pending_count() == 1  # only e.py's new chunk
        assert (await _stored(index))["e.py"] == ["echo_function"]
    finally:
        await index.close()


async def test_a_vector_for_a_deleted_chunk_never_lands_on_a_new_one(
    tmp_path: Path, aistack_home: Path
) -> None:
    """One process embeds the newest chunk while another deletes its file and indexes a
    new one: the new chunk must not inherit the old id, nor the old text's vector."""
    from aistack_tui.storage.hashing_embedder import serialize_f32

    root = tmp_path / "proj"
    root.mkdir()
    _module(root, "a.py", "alpha_function")
    first = await KnowledgeIndex.open(aistack_home, root)
    second = await KnowledgeIndex.open(aistack_home, root)
    try:
        await first.refresh()
        z_path = _module(root, "z.py", "zulu_function")
        await first.refresh_paths([z_path])
        store = first.store
        await store.db.execute("UPDATE chunks SET embedded = 0")
        await store.db.execute("DELETE FROM chunk_vec")
        await store.db.commit()
        pending = await store.pending_embeddings(100)
        newest = max(cid for cid, _ in pending)
        texts = {cid: text for cid, text in pending}
        assert "zulu_function" in texts[newest]
        vectors = await first.embedder.embed([texts[newest]])

        # Meanwhile the other process deletes z.py and indexes y.py.
        z_path.unlink()
        y_path = _module(root, "y.py", "yankee_function")
        await second.refresh_paths([z_path])
        await second.refresh_paths([y_path])
        (y_chunk,) = [r[0] for r in await store.db.execute_fetchall(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'y.py'")]  # fmt: skip
        assert y_chunk > newest, "a deleted chunk's id was handed out again"

        await store.store_vectors([(newest, serialize_f32(vectors[0]))])
        stored = {r[0] for r in await store.db.execute_fetchall("SELECT rowid FROM chunk_vec")}
        assert newest not in stored, "a vector was stored for a deleted chunk"
        hits = await first.search("yankee_function", limit=3)
        assert hits and hits[0].symbol == "yankee_function"
    finally:
        await second.close()
        await first.close()
