"""Open SQLite databases with WAL, a busy timeout, FTS5 and sqlite-vec, and migrate them.

The stdlib `sqlite3` of the Python we ship on cannot load extensions, so when it lacks
`enable_load_extension` we open the connection through `sqlean` (SQLite 3.50 with FTS5)
and hand that to aiosqlite. Migrations are an ordered list of small async functions; the
index of the last one applied is kept in `schema_migrations`, so each runs exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import sqlite3
import threading
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]
T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000


class StorageError(Exception):
    """A database could not be opened or migrated; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    fts5: bool
    vec: bool
    vec_error: str = ""


def _sqlite_module() -> Any:
    """The stdlib module when it can load extensions, else sqlean (same DB-API)."""
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    try:
        import sqlean  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - sqlean is a dependency
        return sqlite3
    return sqlean


def _vec_loadable_path() -> str:
    """Where the `sqlite_vec` package keeps its `vec0` library, without importing it.

    Importing `sqlite_vec` imports numpy whenever numpy is installed (100-200 ms at
    every start); finding the package directory costs nothing.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    locations = spec.submodule_search_locations if spec is not None else None
    if not locations:
        raise ImportError("the sqlite-vec package is not installed")
    return os.path.join(next(iter(locations)), "vec0")


async def _load_vec(db: aiosqlite.Connection) -> str:
    """Load sqlite-vec; return '' on success or the reason it could not be loaded."""
    try:
        await db.enable_load_extension(True)
        await db.load_extension(_vec_loadable_path())
        await db.enable_load_extension(False)
    except (AttributeError, ImportError, OSError, *_db_errors()) as e:
        return (
            f"sqlite-vec could not be loaded ({e}); vector search is off and FTS5 alone "
            "is used. Fix: `pip install sqlean.py sqlite-vec` or use a Python whose "
            "sqlite3 supports enable_load_extension."
        )
    return ""


async def open_database(
    path: Path | str,
    migrations: Sequence[Migration] = (),
    *,
    namespace: str = "main",
    load_vec: bool = True,
    page_size: int | None = None,
) -> tuple[aiosqlite.Connection, Capabilities]:
    """Open (creating parents) and migrate a database.

    `namespace` separates migration lists of different owners sharing one file
    (sessions and memory both live in `aistack.db`). `page_size` applies to a file
    created here (SQLite fixes it with the first write; an existing file keeps its own).
    """
    path_str = str(path)
    if path_str != ":memory:":
        Path(path_str).parent.mkdir(parents=True, exist_ok=True)
    module = _sqlite_module()
    db = aiosqlite.Connection(lambda: module.connect(path_str, check_same_thread=False), 64)
    try:
        await db
    except _db_errors() as e:
        await _worker_stopped(db)
        raise StorageError(f"cannot open database {path_str}: {e}") from e
    # The module's own Row: sqlite3.Row cannot wrap a sqlean cursor and vice versa.
    db.row_factory = module.Row
    await db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    if page_size is not None:
        await db.execute(f"PRAGMA page_size={int(page_size)}")  # before WAL writes the header
    if path_str != ":memory:":
        await db.execute("PRAGMA journal_mode=WAL")
    await db.execute("PRAGMA synchronous=NORMAL")
    await db.execute("PRAGMA foreign_keys=ON")
    vec_error = await _load_vec(db) if load_vec else "not requested"
    caps = Capabilities(fts5=await _has_fts5(db), vec=not vec_error, vec_error=vec_error)
    await migrate(db, migrations, namespace=namespace)
    return db, caps


async def _worker_stopped(db: aiosqlite.Connection) -> None:
    """Wait for the thread of a connection that failed to open to end.

    After a failed connect, aiosqlite queues its thread's stop and hands the stop's
    result back to this event loop, but nothing awaits it. When the error ended the
    program at once (a database that cannot be opened at start-up), the loop was often
    closed by then, and the thread died with `RuntimeError: Event loop is closed`: a
    second "unexpected error" line under the real one, 32 times in 50 here. (The thread
    is aiosqlite's `_thread`; without one, there is nothing to wait for.)
    """
    thread = getattr(db, "_thread", None)
    if isinstance(thread, threading.Thread) and thread.is_alive():
        await asyncio.to_thread(thread.join, 5)


async def _has_fts5(db: aiosqlite.Connection) -> bool:
    try:
        await db.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
        await db.execute("DROP TABLE temp._fts5_probe")
    except _db_errors():
        return False
    return True


async def migrate(
    db: aiosqlite.Connection, migrations: Sequence[Migration], *, namespace: str = "main"
) -> int:
    """Apply the migrations not yet recorded; returns how many ran.

    Each step runs in a `BEGIN IMMEDIATE` transaction that re-reads the version first, so
    two processes (or two owners of one file) migrating at once never apply a step twice.
    """
    errors = _db_errors()
    await db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " namespace TEXT NOT NULL, version INTEGER NOT NULL,"
        " applied_at REAL NOT NULL DEFAULT (unixepoch('subsec')),"
        " PRIMARY KEY (namespace, version))"
    )
    await db.commit()
    ran = 0
    for version, step in enumerate(migrations, start=1):
        try:
            await db.execute("BEGIN IMMEDIATE")
            cur = await db.execute(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE namespace = ?",
                (namespace,),
            )
            row = await cur.fetchone()
            await cur.close()  # sqlean breaks later statements if a cursor is left open
            if row is not None and int(row[0]) >= version:
                await db.rollback()
                continue
            await step(db)
            await db.execute(
                "INSERT INTO schema_migrations(namespace, version) VALUES (?, ?)",
                (namespace, version),
            )
            await db.commit()
        except errors as e:
            await db.rollback()
            raise StorageError(
                f"migration {namespace}#{version} ({step.__name__}) failed: {e}"
            ) from e
        ran += 1
    return ran


def _db_errors() -> tuple[type[Exception], ...]:
    """sqlean's exceptions do not subclass sqlite3's: catch both."""
    module = _sqlite_module()
    if module is sqlite3:
        return (sqlite3.Error,)
    error: type[Exception] = module.Error
    return (sqlite3.Error, error)


DB_ERRORS: tuple[type[Exception], ...] = _db_errors()
"""Base errors of the driver `open_database` uses, for `except DB_ERRORS:`."""


_WRITE_LOCKS: weakref.WeakKeyDictionary[aiosqlite.Connection, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def write_lock(db: aiosqlite.Connection) -> asyncio.Lock:
    """The one lock that serialises this connection's write transactions.

    It belongs to the connection, not to a store: one connection cannot nest
    transactions, so every object writing through it (the memory store, its vector
    indexes and past-session search share one) must queue on the same lock. Other
    connections and processes are serialised by SQLite itself.
    """
    lock = _WRITE_LOCKS.get(db)
    if lock is None:
        lock = _WRITE_LOCKS[db] = asyncio.Lock()
    return lock


async def immediate_transaction(
    db: aiosqlite.Connection,
    work: Callable[[], Awaitable[T]],
    *,
    what: str,
) -> T:
    """Run `work` inside BEGIN IMMEDIATE … COMMIT, rolling back on any failure.

    Writers of this process queue on the connection's `write_lock`. Driver errors become
    StorageError naming `what` ("the session database", "the memory database").
    """
    async with write_lock(db):
        try:
            await db.execute("BEGIN IMMEDIATE")
        except DB_ERRORS as e:
            raise StorageError(f"cannot write to {what}: {e}") from e
        try:
            result = await work()
            await db.commit()
        except BaseException as e:
            with contextlib.suppress(*DB_ERRORS):
                await db.rollback()
            if isinstance(e, DB_ERRORS):
                raise StorageError(f"{what} write failed: {e}") from e
            raise
        return result
