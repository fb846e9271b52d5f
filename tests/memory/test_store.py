"""Memory storage on real SQLite with FTS5 and sqlite-vec: writes, review, provenance,
near-duplicate merging, export / import and embedder switches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aistack_tui.memory.manager import MemoryManager, parse_memory_id
from aistack_tui.memory.models import MemoryNotFoundError, MemoryOperationError
from aistack_tui.memory.store import MIGRATIONS
from aistack_tui.storage.hashing_embedder import HashingEmbedder


async def test_both_extensions_are_loaded(memory: MemoryManager) -> None:
    assert memory.capabilities.fts5
    assert memory.capabilities.vec, memory.capabilities.vec_error


async def test_write_records_provenance_and_vector(memory: MemoryManager) -> None:
    record = await memory.write(
        "We deploy with fly.io, never heroku", source="user", session_id="s1"
    )
    assert record.kind == "semantic"
    assert record.source == "user"
    assert record.session_id == "s1"
    assert record.project == str(memory.project_root.resolve())
    cur = await memory.store.db.execute(
        "SELECT embedder, length(vector) FROM memory_vectors WHERE item_id = ?", (record.id,)
    )
    assert list(map(tuple, await cur.fetchall())) == [("hash-ngram-384", 384 * 4)]


async def test_profile_memories_are_user_wide(aistack_home: Path, tmp_path: Path) -> None:
    a = await MemoryManager.open(aistack_home, tmp_path, HashingEmbedder(), background=False)
    other = tmp_path / "other"
    other.mkdir()
    b = await MemoryManager.open(aistack_home, other, HashingEmbedder(), background=False)
    try:
        await a.write("I prefer short answers", "profile", source="user")
        await a.write("The API lives in services/api", source="user")
        assert [r.content for r in await b.list()] == ["I prefer short answers"]
    finally:
        await a.close()
        await b.close()


async def test_near_duplicates_merge_instead_of_piling_up(memory: MemoryManager) -> None:
    first = await memory.write("We deploy with fly.io, never heroku", source="user")
    again = await memory.write("we deploy with Fly.io -- never Heroku!", source="model")
    reworded = await memory.write(
        "We deploy with fly.io, never heroku, for every service", source="user"
    )
    assert again.id == first.id == reworded.id
    assert reworded.times_seen == 3
    assert reworded.content == "We deploy with fly.io, never heroku, for every service"
    assert len(await memory.list()) == 1


async def test_similar_but_different_facts_stay_apart(memory: MemoryManager) -> None:
    pnpm = await memory.write("Always use pnpm", source="user")
    npm = await memory.write("Always use npm", source="user")
    assert pnpm.id != npm.id


async def test_forget_pin_edit(memory: MemoryManager) -> None:
    record = await memory.write("The staging database is on Neon", source="user")
    await memory.pin(record.id)
    assert (await memory.get(record.id)).pinned
    edited = await memory.edit(record.id, "The staging database is on Supabase")
    assert edited.content == "The staging database is on Supabase"
    hits = await memory.search_memories("supabase", 5)
    assert [h.record.id for h in hits if h.record] == [record.id]
    await memory.forget(record.id)
    assert await memory.list() == []
    assert await memory.search_memories("supabase staging", 5) == []
    with pytest.raises(MemoryNotFoundError, match="m"):
        await memory.forget(record.id)


async def test_bad_input_gets_clear_errors(memory: MemoryManager) -> None:
    with pytest.raises(MemoryOperationError, match="unknown memory kind 'fact'"):
        await memory.write("x y z", "fact", source="user")
    with pytest.raises(MemoryOperationError, match="needs some text"):
        await memory.write("   ", source="user")
    with pytest.raises(MemoryOperationError, match="invalid memory id"):
        parse_memory_id("abc")
    assert parse_memory_id("m12") == 12
    with pytest.raises(MemoryOperationError, match="line 2"):
        await memory.import_records(['{"content": "ok"}', "not json"])
    assert await memory.list() == []


async def test_export_import_roundtrip(aistack_home: Path, memory: MemoryManager,
                                       tmp_path: Path) -> None:
    await memory.write("Always use pnpm", source="user", pinned=True)
    await memory.write("I like terse commit messages", "profile", source="user")
    lines = [json.dumps(r) for r in await memory.export_records()]
    other_home = tmp_path / "other-home"
    fresh = await MemoryManager.open(other_home, memory.project_root, HashingEmbedder(),
                                     background=False)
    try:
        assert await fresh.import_records(lines) == (2, 0)
        assert await fresh.import_records(lines) == (0, 2)
        records = {r.content: r for r in await fresh.list()}
        assert records["Always use pnpm"].pinned
        assert records["I like terse commit messages"].kind == "profile"
    finally:
        await fresh.close()


async def test_switching_embedders_reembeds_in_background(aistack_home: Path,
                                                          project: Path) -> None:
    small = await MemoryManager.open(aistack_home, project, HashingEmbedder(dim=128),
                                     background=False)
    await small.write("Celery workers consume from the redis broker", source="user")
    await small.close()
    big = await MemoryManager.open(aistack_home, project, HashingEmbedder(dim=384))
    try:
        await big.wait_idle()
        cur = await big.store.db.execute("SELECT embedder FROM memory_vectors")
        assert [r[0] for r in await cur.fetchall()] == ["hash-ngram-384"]
        hits = await big.search_memories("celery worker", 3, mode="vector")
        assert hits and hits[0].similarity is not None
    finally:
        await big.close()


async def test_reopening_keeps_memories_and_migrations(aistack_home: Path,
                                                       memory: MemoryManager) -> None:
    await memory.write("Keep me", source="user")
    again = await MemoryManager.open(aistack_home, memory.project_root, HashingEmbedder(),
                                     background=False)
    try:
        assert [r.content for r in await again.list()] == ["Keep me"]
        cur = await again.store.db.execute(
            "SELECT version FROM schema_migrations WHERE namespace = 'memory' ORDER BY version"
        )
        assert [r[0] for r in await cur.fetchall()] == list(range(1, len(MIGRATIONS) + 1))
    finally:
        await again.close()
