"""A rewind cuts the stored session too, so resuming it does not bring the rewound turns back.

Real agent, real SQLite store, real shadow repository; only the model is the fake LLM
server. The session is re-opened from the store the way `aistack -c` / `--resume` does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aistack_tui.agent.compaction import SUMMARY_KIND
from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.checkpoints import CheckpointManager
from aistack_tui.checkpoints.wiring import (
    rewind_stored_session,
)
from aistack_tui.session.config import RunConfig, make_run_config
from aistack_tui.session.live import LiveSession
from aistack_tui.sessions.sqlite_store import open_session_store
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, write_user_settings

ORIGINAL = b"def add(a, b):\n    return a - b\n"


def checkpoints_of(session: LiveSession) -> CheckpointManager:
    """The checkpoints the session was built with (settings `checkpoints`, on by default)."""
    assert session.checkpoints is not None
    return session.checkpoints


def two_turn_script() -> list[Turn]:
    """Turn 1 ("fix add") edits calc.py; turn 2 ("add second") writes second.py."""
    return [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Turn(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                                           "new_string": "a + b"})]),
        Turn(text="Fixed."),
        Turn(tool_calls=[ToolCall("Write", {"file_path": "second.py",
                                            "content": "second\n"})]),
        Turn(text="Wrote it."),
    ]


@pytest.fixture
def project(git_repo: Path, aistack_home: Path) -> Path:
    write_user_settings(aistack_home, FAST_RETRY)
    (git_repo / "calc.py").write_bytes(ORIGINAL)
    return git_repo


def config_for(project: Path, server: FakeLLMServer, **options: object) -> RunConfig:
    return make_run_config(
        cwd=project, env={**os.environ, **server.env("anthropic")},
        model="anthropic/claude-sonnet-4-6", permission_mode="acceptEdits", **options,
    )


async def run_two_turns(session: LiveSession) -> None:
    for prompt in ("fix add", "add second"):
        async for _ in session.agent.run(prompt):
            pass


async def reopen(config: RunConfig) -> list[str]:
    """The texts of the user prompts a resumed session starts with."""
    session = await open_session(config, DenyAll())
    try:
        return [m.text() for m in session.agent.messages
                if m.role == "user" and not m.tool_results()]
    finally:
        await session.close()


async def test_rewound_turns_stay_gone_after_resume(project: Path) -> None:
    with FakeLLMServer(two_turn_script()) as server:
        config = config_for(project, server)
        session = await open_session(config, DenyAll())
        checkpoints_of(session)
        try:
            await run_two_turns(session)
            sid = session.info.id
            assert (project / "second.py").exists()

            result = await session.rewind("2")

            assert result.ok, result.message
            live = [m.id for m in session.agent.messages]
            stored = [m.id for m in await session.store.messages(sid)]
            assert stored == live  # the store holds exactly the cut history
            assert await session.store.search("second", project) == []
            info = await session.store.get(sid)
            assert info is not None and info.message_count == len(live)
        finally:
            await session.close()

        assert not (project / "second.py").exists()
        assert b"a + b" in (project / "calc.py").read_bytes()
        assert await reopen(config_for(project, server, resume=sid)) == ["fix add"]
        assert await reopen(config_for(project, server, continue_latest=True)) == ["fix add"]


async def test_rewind_to_the_first_turn_empties_the_stored_session(project: Path) -> None:
    with FakeLLMServer(two_turn_script()) as server:
        config = config_for(project, server)
        session = await open_session(config, DenyAll())
        checkpoints_of(session)
        try:
            await run_two_turns(session)
            sid = session.info.id
            result = await session.rewind("1")
            assert result.ok, result.message
            assert session.agent.messages == []
        finally:
            await session.close()

        assert (project / "calc.py").read_bytes() == ORIGINAL
        assert await reopen(config_for(project, server, resume=sid)) == []


async def test_rewind_past_a_compaction_reloads_the_cut_history(project: Path) -> None:
    """After a summary replaced the live history, the rewound prompt is only in the store
    (the kept tail was re-stored under new ids); the live history then comes from the cut
    store, the way a resume would load it."""
    with FakeLLMServer([*two_turn_script(), Turn(text="Summary: fixed add, wrote second.py")]) \
            as server:
        config = config_for(project, server)
        session = await open_session(config, DenyAll())
        manager = checkpoints_of(session)
        try:
            await run_two_turns(session)
            sid = session.info.id
            turn_two = manager.list_turns(sid)[1].turn_id
            compacted = await session.agent.compact_now(force_summary=True)
            assert compacted is not None and compacted.phase == 2
            assert turn_two not in [m.id for m in session.agent.messages]

            result = await session.rewind("2")

            assert result.ok, result.message
            assert result.prompt == "add second"  # from the store: not live any more
            live = session.agent.messages
            assert [m.text() for m in live if m.role == "user" and not m.tool_results()] == [
                "fix add"]
            assert all(m.kind != SUMMARY_KIND for m in live)
            assert [m.id for m in await session.store.messages(sid)] == [m.id for m in live]
        finally:
            await session.close()

        assert not (project / "second.py").exists()
        assert await reopen(config_for(project, server, resume=sid)) == ["fix add"]


async def test_rewind_without_a_live_session_cuts_the_store_like_rewind_session(
    project: Path,
) -> None:
    """The path for `aistack rewind`: a closed session, only the store and the manager."""
    with FakeLLMServer(two_turn_script()) as server:
        config = config_for(project, server)
        session = await open_session(config, DenyAll())
        checkpoints_of(session)
        try:
            await run_two_turns(session)
            sid = session.info.id
        finally:
            await session.close()

        store = await open_session_store(config.home)
        try:
            manager = CheckpointManager(config.home, config.project_root)
            result = await rewind_stored_session(store, manager, sid, "2")
            assert result.ok, result.message
            assert result.messages_cut == 4  # prompt, tool call, tool result, answer
            assert result.prompt == "add second"
            again = await rewind_stored_session(store, manager, sid, "9")
            assert not again.ok and again.messages_cut == 0
        finally:
            await store.close()

        assert not (project / "second.py").exists()
        assert await reopen(config_for(project, server, resume=sid)) == ["fix add"]
