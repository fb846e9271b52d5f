"""One write lock per connection: every store writing through a connection queues on it,
so two of them never open a transaction inside the other's (SQLite cannot nest them)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from aistack_tui.llm.types import Message
from aistack_tui.memory.store import MemoryStore
from aistack_tui.sessions.sqlite_store import MIGRATIONS, NAMESPACE, SqliteSessionStore
from aistack_tui.storage.db import StorageError, immediate_transaction, open_database, write_lock


async def test_transactions_on_one_connection_never_interleave(tmp_path: Path) -> None:
    db, _ = await open_database(tmp_path / "t.db", (), namespace="t")
    try:
        await db.execute("CREATE TABLE log(step TEXT)")
        await db.commit()

        def writer(name: str):
            async def work() -> None:
                await db.execute("INSERT INTO log VALUES (?)", (f"{name} begin",))
                await asyncio.sleep(0.01)  # the other writer gets the loop meanwhile
                await db.execute("INSERT INTO log VALUES (?)", (f"{name} end",))
            return work

        await asyncio.gather(*(immediate_transaction(db, writer(n), what="t") for n in "abc"))
        rows = [r[0] for r in await (await db.execute("SELECT step FROM log")).fetchall()]
        assert rows == ["a begin", "a end", "b begin", "b end", "c begin", "c end"]
        assert write_lock(db) is write_lock(db)
    finally:
        await db.close()


async def test_stores_sharing_a_connection_share_its_lock(tmp_path: Path) -> None:
    """The memory connection also carries the sessions tables; two stores on it write at
    once. With a lock per store the second BEGIN IMMEDIATE would fail."""
    db, caps = await open_database(tmp_path / "aistack.db", MIGRATIONS, namespace=NAMESPACE)
    try:
        first, second = SqliteSessionStore(db, caps), SqliteSessionStore(db, caps)
        memory = MemoryStore(db, caps)

        async def session_turns(store: SqliteSessionStore, n: int) -> None:
            info = await store.create(tmp_path, "m/x")
            for i in range(n):
                await store.append(info.id, Message.user(f"hello {i}"))

        async def slow_memory_write() -> None:
            async def work() -> None:
                await db.execute("SELECT 1")
                await asyncio.sleep(0.01)
            for _ in range(5):
                await memory.write(work)

        await asyncio.gather(session_turns(first, 20), session_turns(second, 20),
                             slow_memory_write())
        count = await (await db.execute("SELECT COUNT(*) FROM session_messages")).fetchone()
        assert count is not None and count[0] == 40
    finally:
        await db.close()


async def test_a_failed_write_rolls_back_and_frees_the_lock(tmp_path: Path) -> None:
    db, _ = await open_database(tmp_path / "t.db", (), namespace="t")
    try:
        await db.execute("CREATE TABLE t(x INTEGER UNIQUE)")
        await db.commit()

        async def duplicate() -> None:
            await db.execute("INSERT INTO t VALUES (1)")
            await db.execute("INSERT INTO t VALUES (1)")

        with pytest.raises(StorageError, match="the test database write failed"):
            await immediate_transaction(db, duplicate, what="the test database")
        assert not write_lock(db).locked()
        await immediate_transaction(db, lambda: db.execute("INSERT INTO t VALUES (2)"),
                                    what="the test database")
        rows = await (await db.execute("SELECT x FROM t")).fetchall()
        assert [r[0] for r in rows] == [2]
    finally:
        await db.close()
