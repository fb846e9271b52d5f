"""Sessions in the per-user SQLite database (`$AISTACK_HOME/aistack.db`).

Each message is one row (the seeds' "step": a sequence number per session plus the
message as JSON), written in its own `BEGIN IMMEDIATE` transaction: the write lock is
taken before the next sequence number is read, so two processes appending to one
session (two terminals, `-c` twice) interleave instead of colliding, and WAL plus the
busy timeout from `storage.db` make them wait rather than fail. A plain-text rendering
of each message feeds an external-content FTS5 table kept in sync by triggers, so
sessions can be searched without a second copy of the text.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from aistack_tui.llm.notes import typed_text
from aistack_tui.llm.types import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from aistack_tui.sessions.models import (
    AmbiguousSessionIdError,
    SearchHit,
    SessionInfo,
    SessionNotFoundError,
)
from aistack_tui.storage.db import (
    DB_ERRORS,
    Capabilities,
    Migration,
    StorageError,
    immediate_transaction,
    open_database,
)
from aistack_tui.storage.paths import database_path

T = TypeVar("T")

NAMESPACE = "sessions"
TITLE_MAX = 80
_TOOL_RESULT_INDEX_MAX = 4000
_TOOL_INPUT_INDEX_MAX = 1000
_MIN_TICK = 1e-6


# --- migrations -----------------------------------------------------------------------


async def _create_sessions(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            project_root TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
            message_count INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
            cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0
        )"""
    )
    await db.execute("CREATE INDEX sessions_by_project ON sessions(project_root, updated_at DESC)")
    await db.execute("CREATE INDEX sessions_by_activity ON sessions(updated_at DESC)")


async def _create_messages(db: aiosqlite.Connection) -> None:
    await db.execute(
        """CREATE TABLE session_messages (
            rowid INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            role TEXT NOT NULL,
            provider TEXT,
            model TEXT,
            created_at REAL NOT NULL,
            text TEXT NOT NULL DEFAULT '',
            data TEXT NOT NULL,
            UNIQUE (session_id, seq),
            UNIQUE (session_id, message_id)
        )"""
    )


async def _create_message_fts(db: aiosqlite.Connection) -> None:
    # External content: the text lives once, in session_messages; triggers keep the
    # index in step with every insert/delete/update, including fork's INSERT … SELECT.
    await db.execute(
        "CREATE VIRTUAL TABLE session_messages_fts USING fts5("
        " text, content='session_messages', content_rowid='rowid',"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    await db.execute(
        "CREATE TRIGGER session_messages_ai AFTER INSERT ON session_messages BEGIN"
        " INSERT INTO session_messages_fts(rowid, text) VALUES (new.rowid, new.text); END"
    )
    await db.execute(
        "CREATE TRIGGER session_messages_ad AFTER DELETE ON session_messages BEGIN"
        " INSERT INTO session_messages_fts(session_messages_fts, rowid, text)"
        " VALUES ('delete', old.rowid, old.text); END"
    )
    await db.execute(
        "CREATE TRIGGER session_messages_au AFTER UPDATE OF text ON session_messages BEGIN"
        " INSERT INTO session_messages_fts(session_messages_fts, rowid, text)"
        " VALUES ('delete', old.rowid, old.text);"
        " INSERT INTO session_messages_fts(rowid, text) VALUES (new.rowid, new.text); END"
    )


MIGRATIONS: Sequence[Migration] = (_create_sessions, _create_messages, _create_message_fts)


# --- helpers --------------------------------------------------------------------------


def searchable_text(message: Message) -> str:
    """What the FTS index sees: prose, tool names with (truncated) inputs, tool results.

    Thinking and images are left out: they are noise when looking for a past session.
    """
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            args = json.dumps(block.input, ensure_ascii=False, default=str)
            parts.append(f"{block.name} {args[:_TOOL_INPUT_INDEX_MAX]}")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.text()[:_TOOL_RESULT_INDEX_MAX])
        elif isinstance(block, ThinkingBlock):
            continue
    return "\n".join(p for p in parts if p)


def title_from(text: str) -> str:
    """The first non-blank line, truncated to TITLE_MAX characters."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1].rstrip() + "…"
    return ""


def fts_query(query: str) -> str:
    """Quote each whitespace-separated term as an FTS5 string (AND of all terms).

    FTS5 syntax (`"`, `*`, `:`, `-`, `AND`, parentheses) in user input becomes literal
    text, so no input can raise a syntax error; terms made only of punctuation are
    dropped because they match nothing.
    """
    terms = ['"' + term.replace('"', '""') + '"' for term in query.split()]
    return " ".join(t for t in terms if any(ch.isalnum() for ch in t))


def _root_key(project_root: Path) -> str:
    return str(project_root.expanduser().resolve())


def _info(row: aiosqlite.Row) -> SessionInfo:
    return SessionInfo(
        id=row["id"],
        project_root=row["project_root"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        title=row["title"],
        model=row["model"],
        message_count=row["message_count"],
        parent_id=row["parent_id"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        cache_read_input_tokens=row["cache_read_input_tokens"],
        cache_creation_input_tokens=row["cache_creation_input_tokens"],
        cost_usd=row["cost_usd"],
    )


# --- the store ------------------------------------------------------------------------


class SqliteSessionStore:
    """SessionStore on one aiosqlite connection.

    Write transactions queue on the connection's lock (`storage.db.write_lock`) because
    one connection cannot nest transactions; other connections and processes are
    serialised by SQLite itself.
    """

    def __init__(
        self,
        db: aiosqlite.Connection,
        capabilities: Capabilities,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self.capabilities = capabilities
        self._clock = clock

    # Writes --------------------------------------------------------------------------

    async def _write(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` inside BEGIN IMMEDIATE … COMMIT.

        Shielded from cancellation: when Esc cancels the turn while a message is being
        persisted, the write still finishes instead of leaving the history one short.
        """
        return await asyncio.shield(self._write_now(work))

    async def _write_now(self, work: Callable[[], Awaitable[T]]) -> T:
        return await immediate_transaction(self._db, work, what="the session database")

    async def _tick(self) -> float:
        """Now, but strictly after every recorded activity, so "latest" is never a tie.

        Must run inside a write transaction (the lock makes read-then-write atomic).
        """
        cur = await self._db.execute("SELECT MAX(updated_at) FROM sessions")
        row = await cur.fetchone()
        last = row[0] if row and row[0] is not None else 0.0
        return max(self._clock(), float(last) + _MIN_TICK)

    async def create(
        self, project_root: Path, model: str, *, title: str = "", parent_id: str | None = None,
        session_id: str | None = None,
    ) -> SessionInfo:
        """A new, empty session; `session_id` is the id a client chose (Claude Code's
        `--session-id`), a fresh UUID otherwise."""
        session_id = session_id or str(uuid.uuid4())

        async def work() -> None:
            if parent_id is not None:
                await self._get_exact(parent_id)
            now = await self._tick()
            await self._db.execute(
                "INSERT INTO sessions(id, project_root, created_at, updated_at, title, model,"
                " parent_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, _root_key(project_root), now, now, title, model, parent_id),
            )

        await self._write(work)
        return await self._get_exact(session_id)

    async def append(self, session_id: str, message: Message) -> None:
        data = message.model_dump_json()
        text = searchable_text(message)

        async def work() -> None:
            info = await self._get_exact(session_id)
            cur = await self._db.execute(
                "SELECT 1 FROM session_messages WHERE session_id = ? AND message_id = ?",
                (session_id, message.id),
            )
            if await cur.fetchone() is not None:
                return
            now = await self._tick()
            await self._db.execute(
                "INSERT INTO session_messages(session_id, seq, message_id, role, provider,"
                " model, created_at, text, data)"
                " SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ?"
                " FROM session_messages WHERE session_id = ?",
                (
                    session_id,
                    message.id,
                    message.role,
                    message.provider,
                    message.model,
                    message.created_at,
                    text,
                    data,
                    session_id,
                ),
            )
            title = info.title
            if not title and message.role == "user":
                title = title_from(typed_text(message))  # not the model's notes
            await self._db.execute(
                "UPDATE sessions SET message_count = message_count + 1, updated_at = ?,"
                " title = ? WHERE id = ?",
                (now, title, session_id),
            )

        await self._write(work)

    async def fork(self, session_id: str, new_id: str | None = None) -> SessionInfo:
        """Copy the history under a new id (`new_id`, or a fresh UUID); usage totals start
        at zero so summing sessions never counts the shared prefix twice."""
        new_id = new_id or str(uuid.uuid4())

        async def work() -> None:
            src = await self._get_exact(session_id)
            now = await self._tick()
            await self._db.execute(
                "INSERT INTO sessions(id, project_root, created_at, updated_at, title, model,"
                " parent_id, message_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    new_id,
                    src.project_root,
                    now,
                    now,
                    src.title,
                    src.model,
                    src.id,
                    src.message_count,
                ),
            )
            await self._db.execute(
                "INSERT INTO session_messages(session_id, seq, message_id, role, provider,"
                " model, created_at, text, data)"
                " SELECT ?, seq, message_id, role, provider, model, created_at, text, data"
                " FROM session_messages WHERE session_id = ? ORDER BY seq",
                (new_id, src.id),
            )

        await self._write(work)
        return await self._get_exact(new_id)

    async def truncate(self, session_id: str, from_message_id: str) -> int:
        """Cut the history at `from_message_id` (see SessionStore.truncate).

        One transaction: the rows go, the FTS index follows through its delete trigger,
        and `message_count` is recounted. `updated_at` moves on, because a rewind is
        activity: if messages are left, the session stays the one `aistack -c` continues.
        """

        async def work() -> int:
            await self._get_exact(session_id)
            cur = await self._db.execute(
                "SELECT seq FROM session_messages WHERE session_id = ? AND message_id = ?",
                (session_id, from_message_id),
            )
            row = await cur.fetchone()
            if row is None:
                return 0
            cur = await self._db.execute(
                "DELETE FROM session_messages WHERE session_id = ? AND seq >= ?",
                (session_id, row[0]),
            )
            deleted = cur.rowcount
            now = await self._tick()
            await self._db.execute(
                "UPDATE sessions SET updated_at = ?, message_count ="
                " (SELECT COUNT(*) FROM session_messages WHERE session_id = ?) WHERE id = ?",
                (now, session_id, session_id),
            )
            return deleted

        return await self._write(work)

    async def record_usage(
        self, session_id: str, usage: Usage, cost_usd: float | None, model: str
    ) -> None:
        async def work() -> None:
            await self._get_exact(session_id)
            await self._db.execute(
                "UPDATE sessions SET input_tokens = input_tokens + ?,"
                " output_tokens = output_tokens + ?,"
                " cache_read_input_tokens = cache_read_input_tokens + ?,"
                " cache_creation_input_tokens = cache_creation_input_tokens + ?,"
                " cost_usd = cost_usd + ?, model = CASE WHEN ? = '' THEN model ELSE ? END"
                " WHERE id = ?",
                (
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_input_tokens,
                    usage.cache_creation_input_tokens,
                    cost_usd or 0.0,
                    model,
                    model,
                    session_id,
                ),
            )

        await self._write(work)

    async def set_title(self, session_id: str, title: str) -> None:
        async def work() -> None:
            await self._get_exact(session_id)
            await self._db.execute(
                "UPDATE sessions SET title = ? WHERE id = ?", (title.strip(), session_id)
            )

        await self._write(work)

    # Reads ---------------------------------------------------------------------------

    async def _get_exact(self, session_id: str) -> SessionInfo:
        cur = await self._db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,))
        row = await cur.fetchone()
        if row is None:
            raise SessionNotFoundError(f"no session with id {session_id!r}")
        return _info(row)

    async def messages(self, session_id: str) -> builtins.list[Message]:
        cur = await self._db.execute(
            "SELECT data FROM session_messages WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        rows = await cur.fetchall()
        return [Message.model_validate_json(row[0]) for row in rows]

    async def get(self, session_id: str) -> SessionInfo | None:
        key = session_id.strip()
        if not key:
            return None
        cur = await self._db.execute("SELECT * FROM sessions WHERE id = ?", (key,))
        row = await cur.fetchone()
        if row is not None:
            return _info(row)
        # A range scan on the primary key instead of LIKE, so `%`/`_` need no escaping.
        cur = await self._db.execute(
            "SELECT * FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 50",
            (key, key + "\U0010ffff"),
        )
        rows = list(await cur.fetchall())
        if not rows:
            return None
        if len(rows) > 1:
            raise AmbiguousSessionIdError(key, [r["id"] for r in rows])
        return _info(rows[0])

    async def latest(self, project_root: Path) -> SessionInfo | None:
        """Sessions that never got a message are skipped: there is nothing to continue."""
        cur = await self._db.execute(
            "SELECT * FROM sessions WHERE project_root = ? AND message_count > 0"
            " ORDER BY updated_at DESC, rowid DESC LIMIT 1",
            (_root_key(project_root),),
        )
        row = await cur.fetchone()
        return _info(row) if row is not None else None

    async def list(
        self, project_root: Path | None = None, limit: int = 50
    ) -> builtins.list[SessionInfo]:
        limit = max(0, limit)
        if project_root is None:
            cur = await self._db.execute(
                "SELECT * FROM sessions ORDER BY updated_at DESC, rowid DESC LIMIT ?", (limit,)
            )
        else:
            cur = await self._db.execute(
                "SELECT * FROM sessions WHERE project_root = ?"
                " ORDER BY updated_at DESC, rowid DESC LIMIT ?",
                (_root_key(project_root), limit),
            )
        return [_info(row) for row in await cur.fetchall()]

    async def search(
        self, query: str, project_root: Path | None = None, limit: int = 20
    ) -> builtins.list[SearchHit]:
        match = fts_query(query)
        if not match or limit <= 0:
            return []
        sql = (
            "SELECT m.session_id, m.message_id, m.role, m.created_at, s.title,"
            " snippet(session_messages_fts, 0, '[', ']', '…', 12) AS snip,"
            " bm25(session_messages_fts) AS rank"
            " FROM session_messages_fts"
            " JOIN session_messages AS m ON m.rowid = session_messages_fts.rowid"
            " JOIN sessions AS s ON s.id = m.session_id"
            " WHERE session_messages_fts MATCH ?"
        )
        params: list[Any] = [match]
        if project_root is not None:
            sql += " AND s.project_root = ?"
            params.append(_root_key(project_root))
        sql += " ORDER BY rank, m.created_at DESC LIMIT ?"
        params.append(limit)
        cur = await self._db.execute(sql, params)
        return [
            SearchHit(
                session_id=row["session_id"],
                message_id=row["message_id"],
                snippet=row["snip"],
                rank=float(row["rank"]),
                role=row["role"],
                created_at=row["created_at"],
                session_title=row["title"],
            )
            for row in await cur.fetchall()
        ]

    async def close(self) -> None:
        await self._db.close()


async def open_session_store(
    home: Path, *, clock: Callable[[], float] = time.time
) -> SqliteSessionStore:
    """Open (creating and migrating as needed) the sessions tables in `$home/aistack.db`.

    Raises StorageError with a readable message when the database cannot be opened.
    """
    path = database_path(home)
    try:
        db, caps = await open_database(path, MIGRATIONS, namespace=NAMESPACE)
    except (*DB_ERRORS, OSError) as e:
        raise StorageError(f"cannot open the session database {path}: {e}") from e
    if not caps.fts5:  # pragma: no cover - sqlean and CPython's sqlite3 both ship FTS5
        await db.close()
        raise StorageError("this SQLite has no FTS5; install sqlean.py")
    return SqliteSessionStore(db, caps, clock=clock)
