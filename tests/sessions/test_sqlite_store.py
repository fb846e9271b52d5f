"""The SQLite session store against a real database file (sqlean, FTS5, sqlite-vec)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.llm.types import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from aistack_tui.sessions.models import AmbiguousSessionIdError, SessionNotFoundError
from aistack_tui.sessions.sqlite_store import (
    MIGRATIONS,
    NAMESPACE,
    SqliteSessionStore,
    fts_query,
    open_session_store,
)
from aistack_tui.sessions.store import SessionStore
from aistack_tui.storage.db import StorageError, migrate
from aistack_tui.storage.paths import database_path

WORKER = Path(__file__).with_name("append_worker.py")


@pytest.fixture
async def store(aistack_home: Path) -> AsyncIterator[SqliteSessionStore]:
    s = await open_session_store(aistack_home)
    yield s
    await s.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def assistant(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)], provider="fake", model="m1")


def worker_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}


async def test_store_opens_with_fts5_and_sqlite_vec(store: SqliteSessionStore) -> None:
    assert store.capabilities.fts5
    assert store.capabilities.vec, store.capabilities.vec_error
    assert isinstance(store, SessionStore)


async def test_every_block_type_round_trips(store: SqliteSessionStore, project: Path) -> None:
    info = await store.create(project, "anthropic/claude-x")
    sent = [
        Message.user("please look at the diagram"),
        Message(
            role="user",
            content=[
                TextBlock(text="here it is"),
                ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
            ],
        ),
        Message(
            role="assistant",
            content=[
                ThinkingBlock(thinking="I should read the file", signature="sig=="),
                TextBlock(text="Reading it."),
                ToolUseBlock(id="tu_1", name="Read", input={"path": "a.py", "n": [1, 2]}),
            ],
            provider="anthropic",
            model="claude-x",
            usage=Usage(input_tokens=10, output_tokens=5, cache_read_input_tokens=3),
            stop_reason="tool_use",
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="tu_1", content="print('hi')  # ünïcode ✓"),
                ToolResultBlock(
                    tool_use_id="tu_2",
                    content=[
                        TextBlock(text="shot"),
                        ImageBlock(media_type="image/jpeg", data="/9j/"),
                    ],
                    is_error=True,
                ),
            ],
        ),
    ]
    for m in sent:
        await store.append(info.id, m)

    assert await store.messages(info.id) == sent
    fresh = await store.get(info.id)
    assert fresh is not None
    assert fresh.message_count == 4


async def test_messages_come_back_in_append_order_not_timestamp_order(
    store: SqliteSessionStore, project: Path
) -> None:
    info = await store.create(project, "m")
    sent = [
        Message(role="user", content=[TextBlock(text=f"m{i}")], created_at=1000.0 - i)
        for i in range(25)
    ]
    for m in sent:
        await store.append(info.id, m)
    assert [m.text() for m in await store.messages(info.id)] == [f"m{i}" for i in range(25)]


async def test_append_is_idempotent_on_message_id(store: SqliteSessionStore, project: Path) -> None:
    info = await store.create(project, "m")
    msg = Message.user("once")
    await store.append(info.id, msg)
    await store.append(info.id, msg)
    await store.append(info.id, assistant("reply"))
    assert [m.text() for m in await store.messages(info.id)] == ["once", "reply"]
    fresh = await store.get(info.id)
    assert fresh is not None
    assert fresh.message_count == 2


async def test_unknown_session_gives_a_clear_error(store: SqliteSessionStore) -> None:
    with pytest.raises(SessionNotFoundError, match="no session with id 'nope'"):
        await store.append("nope", Message.user("x"))
    with pytest.raises(SessionNotFoundError):
        await store.record_usage("nope", Usage(), None, "m")
    with pytest.raises(SessionNotFoundError):
        await store.fork("nope")
    assert await store.messages("nope") == []
    assert await store.get("nope") is None


async def test_title_defaults_to_first_line_of_first_user_message(
    store: SqliteSessionStore, project: Path
) -> None:
    info = await store.create(project, "m")
    assert info.title == ""
    await store.append(info.id, Message.user("\n  Fix   the flaky test \nin ci please"))
    await store.append(info.id, Message.user("something else"))
    fresh = await store.get(info.id)
    assert fresh is not None
    assert fresh.title == "Fix the flaky test"

    long = await store.create(project, "m")
    await store.append(long.id, Message.user("x" * 200))
    fresh = await store.get(long.id)
    assert fresh is not None
    assert len(fresh.title) == 80
    assert fresh.title.endswith("…")

    named = await store.create(project, "m", title="My title")
    await store.append(named.id, Message.user("ignored for the title"))
    await store.set_title(named.id, "  Renamed ")
    fresh = await store.get(named.id)
    assert fresh is not None
    assert fresh.title == "Renamed"


async def test_latest_is_the_last_appended_to_per_project(
    aistack_home: Path, tmp_path: Path
) -> None:
    # A frozen clock: ordering must still be strict, never a tie.
    store = await open_session_store(aistack_home, clock=lambda: 1000.0)
    try:
        p1, p2 = tmp_path / "p1", tmp_path / "p2"
        p1.mkdir()
        p2.mkdir()
        a = await store.create(p1, "m")
        b = await store.create(p1, "m")
        c = await store.create(p2, "m")
        await store.append(a.id, Message.user("a1"))
        await store.append(c.id, Message.user("c1"))
        await store.append(b.id, Message.user("b1"))
        latest = await store.latest(p1)
        assert latest is not None
        assert latest.id == b.id
        await store.append(a.id, Message.user("a2"))
        latest = await store.latest(p1)
        assert latest is not None
        assert latest.id == a.id
        latest2 = await store.latest(p2)
        assert latest2 is not None
        assert latest2.id == c.id

        # An empty session has nothing to continue, and the path spelling does not matter.
        await store.create(p1, "m")
        latest = await store.latest(p1 / ".." / "p1")
        assert latest is not None
        assert latest.id == a.id
        assert await store.latest(tmp_path / "elsewhere") is None
    finally:
        await store.close()


async def test_list_filters_by_project_and_orders_by_activity(
    store: SqliteSessionStore, tmp_path: Path
) -> None:
    p1, p2 = tmp_path / "p1", tmp_path / "p2"
    s1 = await store.create(p1, "m")
    s2 = await store.create(p2, "m")
    s3 = await store.create(p1, "m")
    await store.append(s1.id, Message.user("hello"))
    assert [s.id for s in await store.list(p1)] == [s1.id, s3.id]
    assert [s.id for s in await store.list()] == [s1.id, s3.id, s2.id]
    assert [s.id for s in await store.list(limit=1)] == [s1.id]
    assert all(s.project_root == str(p1.resolve()) for s in await store.list(p1))


async def test_get_accepts_a_unique_prefix(store: SqliteSessionStore, project: Path) -> None:
    sessions = [await store.create(project, "m") for _ in range(17)]
    target = sessions[0]
    got = await store.get(target.id[:13])
    assert got is not None
    assert got.id == target.id
    assert await store.get("zzzz") is None
    assert await store.get("  ") is None
    # 17 uuid4s over 16 hex digits: some first digit is shared.
    firsts = [s.id[0] for s in sessions]
    shared = next(ch for ch in firsts if firsts.count(ch) > 1)
    with pytest.raises(AmbiguousSessionIdError, match="ambiguous") as err:
        await store.get(shared)
    assert len(err.value.candidates) == firsts.count(shared)


async def test_fork_copies_history_into_a_new_session(
    store: SqliteSessionStore, project: Path
) -> None:
    src = await store.create(project, "m")
    history = [Message.user("q1"), assistant("a1"), Message.user("q2")]
    for m in history:
        await store.append(src.id, m)
    await store.record_usage(src.id, Usage(input_tokens=100), 0.5, "m")

    fork = await store.fork(src.id)
    assert fork.id != src.id
    assert fork.parent_id == src.id
    assert fork.title == "q1"
    assert fork.message_count == 3
    assert fork.cost_usd == 0.0
    assert await store.messages(fork.id) == history

    await store.append(fork.id, assistant("only in the fork"))
    assert len(await store.messages(src.id)) == 3
    assert len(await store.messages(fork.id)) == 4
    latest = await store.latest(project)
    assert latest is not None
    assert latest.id == fork.id
    # The copied history is searchable under both ids.
    hits = await store.search("q2")
    assert {h.session_id for h in hits} == {src.id, fork.id}


async def test_record_usage_accumulates_tokens_and_known_costs(
    store: SqliteSessionStore, project: Path
) -> None:
    info = await store.create(project, "openai/gpt-a")
    await store.record_usage(info.id, Usage(input_tokens=10, output_tokens=2), 0.25, "openai/gpt-a")
    await store.record_usage(
        info.id,
        Usage(input_tokens=1, cache_read_input_tokens=7, cache_creation_input_tokens=3),
        None,
        "ollama/llama",
    )
    fresh = await store.get(info.id)
    assert fresh is not None
    assert fresh.usage == Usage(
        input_tokens=11, output_tokens=2, cache_read_input_tokens=7, cache_creation_input_tokens=3
    )
    assert fresh.cost_usd == pytest.approx(0.25)
    assert fresh.model == "ollama/llama"


@pytest.mark.parametrize(
    "query",
    [
        "foo.bar()",
        '"unbalanced',
        "AND OR NOT",
        "*",
        "(",
        "col:val",
        "-x",
        "NEAR(a b)",
        "",
        "   ",
        "^",
        "a'b",
        "ümlaut!!",
    ],
)
async def test_search_never_raises_on_user_punctuation(
    store: SqliteSessionStore, project: Path, query: str
) -> None:
    info = await store.create(project, "m")
    await store.append(info.id, Message.user("call foo.bar() and col:val then AND OR NOT"))
    hits = await store.search(query, project)
    assert isinstance(hits, list)


async def test_search_finds_text_tool_results_and_filters_by_project(
    store: SqliteSessionStore, tmp_path: Path
) -> None:
    p1, p2 = tmp_path / "p1", tmp_path / "p2"
    s1 = await store.create(p1, "m")
    s2 = await store.create(p2, "m")
    await store.append(s1.id, Message.user("Why does parse_config() fail on empty files?"))
    tool_msg = Message(
        role="user",
        content=[ToolResultBlock(tool_use_id="t", content="Traceback: ZeroDivisionError in ratio")],
    )
    await store.append(s1.id, tool_msg)
    await store.append(s2.id, Message.user("parse_config() is slow on big files"))

    hits = await store.search("parse_config()")
    assert {h.session_id for h in hits} == {s1.id, s2.id}
    hits = await store.search("parse_config() empty", p1)
    assert [h.session_id for h in hits] == [s1.id]
    assert "[" in hits[0].snippet
    assert hits[0].session_title.startswith("Why does")
    hits = await store.search("zerodivisionerror")
    assert [h.message_id for h in hits] == [tool_msg.id]
    assert hits[0].rank < 0
    assert await store.search("parse_config()", tmp_path / "none") == []


def test_fts_query_quotes_every_term() -> None:
    assert fts_query('say "hi" now') == '"say" """hi""" "now"'
    assert fts_query("!! ??") == ""


async def test_migrations_run_once_and_reopening_is_idempotent(
    aistack_home: Path, project: Path
) -> None:
    store = await open_session_store(aistack_home)
    info = await store.create(project, "m")
    await store.append(info.id, Message.user("persisted"))
    await store.close()

    for _ in range(2):
        store = await open_session_store(aistack_home)
        try:
            db = store._db
            cur = await db.execute(
                "SELECT version FROM schema_migrations WHERE namespace = ? ORDER BY version",
                (NAMESPACE,),
            )
            assert [r[0] for r in await cur.fetchall()] == list(range(1, len(MIGRATIONS) + 1))
            assert await migrate(db, MIGRATIONS, namespace=NAMESPACE) == 0
            assert [m.text() for m in await store.messages(info.id)] == ["persisted"]
            cur = await db.execute("PRAGMA journal_mode")
            row = await cur.fetchone()
            assert row is not None
            assert row[0] == "wal"
        finally:
            await store.close()
    assert database_path(aistack_home).exists()


async def test_two_connections_append_concurrently(aistack_home: Path, project: Path) -> None:
    first = await open_session_store(aistack_home)
    second = await open_session_store(aistack_home)
    try:
        info = await first.create(project, "m")

        async def writer(s: SqliteSessionStore, label: str) -> None:
            for i in range(30):
                await s.append(info.id, Message.user(f"{label}{i}"))

        await asyncio.gather(writer(first, "a"), writer(second, "b"), writer(first, "c"))
        texts = [m.text() for m in await second.messages(info.id)]
        assert len(texts) == 90
        for label in "abc":
            assert [t for t in texts if t[0] == label] == [f"{label}{i}" for i in range(30)]
        fresh = await first.get(info.id)
        assert fresh is not None
        assert fresh.message_count == 90
    finally:
        await first.close()
        await second.close()


async def test_killed_process_keeps_every_committed_message(
    aistack_home: Path, project: Path
) -> None:
    store = await open_session_store(aistack_home)
    info = await store.create(project, "m")
    await store.close()

    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(aistack_home), info.id, "3", "crash", "hang"],
        stdout=subprocess.PIPE,
        env=worker_env(),
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), timeout=30)
        assert line.strip() == b"done"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL

    store = await open_session_store(aistack_home)
    try:
        assert [m.text() for m in await store.messages(info.id)] == [
            "crash-0",
            "crash-1",
            "crash-2",
        ]
        latest = await store.latest(project)
        assert latest is not None
        assert latest.id == info.id
    finally:
        await store.close()


async def test_two_processes_append_to_one_session(aistack_home: Path, project: Path) -> None:
    store = await open_session_store(aistack_home)
    try:
        info = await store.create(project, "m")
        procs = [
            subprocess.Popen(
                [sys.executable, str(WORKER), str(aistack_home), info.id, "20", label],
                env=worker_env(),
            )
            for label in ("p", "q")
        ]
        codes = [await asyncio.to_thread(p.wait, 60) for p in procs]
        assert codes == [0, 0]
        texts = [m.text() for m in await store.messages(info.id)]
        assert sorted(texts) == sorted(
            [f"p-{i}" for i in range(20)] + [f"q-{i}" for i in range(20)]
        )
        assert [t for t in texts if t.startswith("p")] == [f"p-{i}" for i in range(20)]
    finally:
        await store.close()


async def test_unopenable_database_is_a_storage_error(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(StorageError, match="cannot open the session database"):
        await open_session_store(not_a_dir)


async def test_cancelling_the_caller_still_persists_the_message(
    store: SqliteSessionStore, project: Path
) -> None:
    info = await store.create(project, "m")
    task = asyncio.create_task(store.append(info.id, Message.user("in flight")))
    await asyncio.sleep(0)  # let it start writing
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await store.append(info.id, Message.user("next"))
    assert [m.text() for m in await store.messages(info.id)] == ["in flight", "next"]
