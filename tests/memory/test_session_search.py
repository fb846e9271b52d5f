"""Search over past sessions: the sessions store's FTS fused with message vectors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.llm.types import Message, TextBlock, ToolResultBlock
from aistack_tui.memory.manager import MemoryManager
from aistack_tui.sessions.sqlite_store import open_session_store
from aistack_tui.storage.hashing_embedder import HashingEmbedder


async def _seed(home: Path, project: Path) -> str:
    store = await open_session_store(home)
    try:
        old = await store.create(project, "fake/model")
        await store.append(old.id, Message.user("the upload test is flaky again, fix it"))
        await store.append(old.id, Message(role="assistant", content=[TextBlock(
            text="Fixed the flaky upload test by awaiting the multipart completion.")]))
        await store.append(old.id, Message(role="user", content=[ToolResultBlock(
            tool_use_id="t", content="upload upload upload flaky flaky")]))
        other = await store.create(project, "fake/model")
        await store.append(other.id, Message.user("bump the version to 2.0"))
        elsewhere = await store.create(project.parent, "fake/model")
        await store.append(elsewhere.id, Message.user("the upload test in another project"))
        return old.id
    finally:
        await store.close()


@pytest.fixture
async def seeded(aistack_home: Path, project: Path) -> AsyncIterator[tuple[MemoryManager, str]]:
    # The sessions store is opened first: storage.db's migrate fails re-opening a
    # database whose sessions tables exist (see memory.store.migrate_pending).
    old = await _seed(aistack_home, project)
    manager = await MemoryManager.open(aistack_home, project, HashingEmbedder(), background=False)
    try:
        yield manager, old
    finally:
        await manager.close()


async def test_finds_the_time_we_fixed_the_flaky_upload_test(
    seeded: tuple[MemoryManager, str],
) -> None:
    memory, old = seeded
    hits = await memory.search_sessions("the time we fixed the flaky upload test", 5)
    assert hits, "expected a past-session hit"
    assert hits[0].session_id == old
    assert "multipart" in hits[0].text
    assert all("another project" not in h.text for h in hits)
    assert all("upload upload upload" not in h.text for h in hits), "tool results skipped"


async def test_vectors_find_what_words_miss(seeded: tuple[MemoryManager, str]) -> None:
    memory, old = seeded
    await memory.sessions.index_pending()
    assert await memory.sessions._lexical("flakey uplod", memory.project, 10) == []
    hits = await memory.search_sessions("flakey uplod tests", 5)
    assert hits and hits[0].session_id == old


async def test_context_block_offers_past_sessions_but_not_the_current_one(
    seeded: tuple[MemoryManager, str],
) -> None:
    memory, old = seeded
    await memory.sessions.index_pending()
    current = [Message.user("the upload test fails again, how did we fix it?")]
    block = await memory.context_block(current, 2000)
    assert f"session {old[:8]}" in block
    assert "multipart" in block
    memory.session_id = old
    memory._cache.clear()
    assert f"session {old[:8]}" not in await memory.context_block(current, 2000)
