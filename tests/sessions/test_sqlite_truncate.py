"""`SessionStore.truncate`: how a rewind cuts the stored conversation (real SQLite file)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.llm.types import Message, TextBlock
from aistack_tui.sessions.models import SessionNotFoundError
from aistack_tui.sessions.sqlite_store import SqliteSessionStore, open_session_store


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


async def conversation(store: SqliteSessionStore, project: Path) -> tuple[str, list[Message]]:
    info = await store.create(project, "m")
    sent = [
        Message.user("first prompt about walrus"),
        assistant("walrus answer"),
        Message.user("second prompt about narwhal"),
        assistant("narwhal answer"),
        Message.user("third prompt about narwhal and okapi"),
    ]
    for m in sent:
        await store.append(info.id, m)
    return info.id, sent


async def fts_is_consistent(store: SqliteSessionStore) -> None:
    """FTS5's own check that the external-content index matches session_messages."""
    await store._db.execute(
        "INSERT INTO session_messages_fts(session_messages_fts, rank) VALUES ('integrity-check', 1)"
    )


async def test_truncate_removes_the_message_and_every_later_one(
    store: SqliteSessionStore, project: Path
) -> None:
    sid, sent = await conversation(store, project)
    before = await store.get(sid)
    assert before is not None

    deleted = await store.truncate(sid, sent[2].id)

    assert deleted == 3
    assert [m.id for m in await store.messages(sid)] == [sent[0].id, sent[1].id]
    after = await store.get(sid)
    assert after is not None
    assert after.message_count == 2
    assert after.updated_at > before.updated_at
    assert after.title == before.title  # kept: the first prompt is still there


async def test_search_no_longer_finds_truncated_messages(
    store: SqliteSessionStore, project: Path
) -> None:
    sid, sent = await conversation(store, project)
    assert {h.message_id for h in await store.search("narwhal")} == {
        sent[2].id,
        sent[3].id,
        sent[4].id,
    }

    await store.truncate(sid, sent[2].id)

    assert await store.search("narwhal") == []
    assert await store.search("okapi") == []
    assert [h.message_id for h in await store.search("walrus answer")] == [sent[1].id]
    await fts_is_consistent(store)


async def test_truncate_leaves_other_sessions_and_forks_untouched(
    store: SqliteSessionStore, project: Path
) -> None:
    sid, sent = await conversation(store, project)
    other, other_sent = await conversation(store, project)
    fork = await store.fork(sid)  # same message ids as `sid`, under another session

    await store.truncate(sid, sent[1].id)

    assert [m.id for m in await store.messages(sid)] == [sent[0].id]
    assert [m.id for m in await store.messages(other)] == [m.id for m in other_sent]
    assert [m.id for m in await store.messages(fork.id)] == [m.id for m in sent]
    hits = await store.search("okapi")
    assert {h.session_id for h in hits} == {other, fork.id}
    fork_info = await store.get(fork.id)
    assert fork_info is not None
    assert fork_info.message_count == 5
    await fts_is_consistent(store)


async def test_truncate_at_the_first_message_empties_the_session(
    store: SqliteSessionStore, project: Path
) -> None:
    sid, sent = await conversation(store, project)

    assert await store.truncate(sid, sent[0].id) == 5

    assert await store.messages(sid) == []
    info = await store.get(sid)
    assert info is not None
    assert info.message_count == 0
    # `-c` has nothing to continue in an empty session, as for one never used.
    assert await store.latest(project) is None


async def test_unknown_message_id_is_a_no_op_and_unknown_session_an_error(
    store: SqliteSessionStore, project: Path
) -> None:
    sid, sent = await conversation(store, project)
    before = await store.get(sid)

    assert await store.truncate(sid, "no-such-message") == 0

    assert [m.id for m in await store.messages(sid)] == [m.id for m in sent]
    assert await store.get(sid) == before
    with pytest.raises(SessionNotFoundError, match="no session with id 'nope'"):
        await store.truncate("nope", sent[0].id)


async def test_history_grows_again_after_a_truncate(
    store: SqliteSessionStore, project: Path
) -> None:
    sid, sent = await conversation(store, project)
    await store.truncate(sid, sent[2].id)

    # The rewound prompt can be sent again under its old id, then new messages follow.
    await store.append(sid, sent[2])
    await store.append(sid, assistant("a different answer"))

    assert [m.text() for m in await store.messages(sid)] == [
        "first prompt about walrus",
        "walrus answer",
        "second prompt about narwhal",
        "a different answer",
    ]
    info = await store.get(sid)
    assert info is not None
    assert info.message_count == 4
    assert [h.message_id for h in await store.search("different")] != []
    await fts_is_consistent(store)
