"""A print-mode run edits files through the fake LLM server; `aistack undo` restores them."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.checkpoints import CheckpointManager
from aistack_tui.cli.commands import undo
from aistack_tui.cli.main import SUBCOMMANDS
from aistack_tui.session.config import make_run_config
from aistack_tui.session.live import LiveSession
from aistack_tui.sessions.sqlite_store import open_session_store
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, run_aistack, write_user_settings

ORIGINAL = b"def add(a, b):\r\n    return a - b\r\n"


def checkpoints_of(session: LiveSession) -> CheckpointManager:
    """The checkpoints the session was built with (settings `checkpoints`, on by default)."""
    assert session.checkpoints is not None
    return session.checkpoints


def edit_script() -> list[Turn]:
    return [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Turn(tool_calls=[
            ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                              "new_string": "a + b"}),
            ToolCall("Write", {"file_path": "notes/new.txt", "content": "made by the agent\n"}),
        ]),
        Turn(tool_calls=[ToolCall("Bash", {"command": "rm old.txt"})]),
        Turn(text="Done."),
    ]


@pytest.fixture
def project(git_repo: Path, aistack_home: Path) -> Path:
    write_user_settings(aistack_home, FAST_RETRY)
    (git_repo / "calc.py").write_bytes(ORIGINAL)
    (git_repo / "old.txt").write_bytes(b"old\n")
    return git_repo


async def run_print_with_checkpoints(project: Path, server: FakeLLMServer, prompt: str) -> str:
    """What `aistack -p` does, with the checkpoints the session is built with."""
    config = make_run_config(
        cwd=project, env={**_env(), **server.env("anthropic")},
        model="anthropic/claude-sonnet-4-6", permission_mode="acceptEdits",
        allowed_tools=["Bash(rm old.txt)"],
    )
    session = await open_session(config, DenyAll())
    checkpoints_of(session)
    try:
        async for _ in session.agent.run(prompt):
            pass
    finally:
        await session.close()
    return session.info.id


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def undo_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    undo.register(sub)
    return parser.parse_args(list(argv))


async def test_print_run_then_undo_restores_files_byte_for_byte(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeLLMServer(edit_script()) as server:
        await run_print_with_checkpoints(project, server, "fix add")
    assert b"a + b" in (project / "calc.py").read_bytes()
    assert (project / "notes" / "new.txt").exists()
    assert not (project / "old.txt").exists()

    config = make_run_config(cwd=project)
    code = await undo.run(undo_args("undo"), config)

    assert code == 0, capsys.readouterr().err
    assert (project / "calc.py").read_bytes() == ORIGINAL
    assert (project / "old.txt").read_bytes() == b"old\n"
    assert not (project / "notes").exists()
    assert "restored calc.py" in capsys.readouterr().out
    # Nothing left to undo: a clear message and exit 1, not a traceback.
    assert await undo.run(undo_args("undo"), config) == 1
    assert "nothing to undo" in capsys.readouterr().err


async def test_undo_reports_a_hand_edit_and_force_overwrites_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeLLMServer(edit_script()) as server:
        await run_print_with_checkpoints(project, server, "fix add")
    (project / "calc.py").write_bytes(b"# my change\n")
    config = make_run_config(cwd=project)

    assert await undo.run(undo_args("undo"), config) == 1
    err = capsys.readouterr().err
    assert "conflict: calc.py" in err and "--force" in err
    assert (project / "calc.py").read_bytes() == b"# my change\n"

    assert await undo.run(undo_args("undo", "--force"), config) == 0
    assert (project / "calc.py").read_bytes() == ORIGINAL


async def test_rewind_lists_turns_and_restores_an_earlier_one(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeLLMServer([*edit_script(), Turn(tool_calls=[ToolCall(
            "Write", {"file_path": "second.py", "content": "second\n"})]),
            Turn(text="ok")]) as server:
        sid = await run_print_with_checkpoints(project, server, "fix add")
        config = make_run_config(
            cwd=project, env={**_env(), **server.env("anthropic")},
            model="anthropic/claude-sonnet-4-6", permission_mode="acceptEdits", resume=sid,
        )
        session = await open_session(config, DenyAll())
        manager = checkpoints_of(session)
        try:
            async for _ in session.agent.run("rewrite calc"):
                pass
            assert (project / "second.py").read_bytes() == b"second\n"
            assert len(manager.list_turns(sid)) == 2
            first_prompt = manager.list_turns(sid)[0].turn_id
            result = await session.rewind("2")
            assert result.ok
            assert b"a + b" in (project / "calc.py").read_bytes()
            assert not (project / "second.py").exists()
            assert [m.text() for m in session.agent.messages if m.role == "user"][-1] != (
                "rewrite calc")
        finally:
            await session.close()

    assert await undo.run(undo_args("rewind", "--session", sid[:12]), config) == 0
    assert "fix add" in capsys.readouterr().out
    assert await undo.run(undo_args("rewind", first_prompt), config) == 0
    assert (project / "calc.py").read_bytes() == ORIGINAL
    assert "cut " in capsys.readouterr().out
    store = await open_session_store(config.home)
    try:  # the shell rewind cut the stored conversation back to before "fix add"
        assert await store.messages(sid) == []
    finally:
        await store.close()
    assert await undo.run(undo_args("rewind", "9", "--session", "nope"), config) == 2


@pytest.mark.slow
@pytest.mark.skipif("undo" not in SUBCOMMANDS, reason="`aistack undo` is not dispatched yet")
def test_aistack_print_then_aistack_undo_subprocess(project: Path) -> None:
    with FakeLLMServer(edit_script()) as server:
        proc = run_aistack(
            ["-p", "fix add", "--model", "anthropic/claude-sonnet-4-6",
             "--permission-mode", "acceptEdits", "--allowed-tools", "Bash(rm old.txt)"],
            cwd=project, env=server.env("anthropic"),
        )
        assert proc.returncode == 0, proc.stderr
    assert b"a + b" in (project / "calc.py").read_bytes()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project,
                            capture_output=True, text=True).stdout

    proc = run_aistack(["undo"], cwd=project)

    assert proc.returncode == 0, proc.stderr
    assert (project / "calc.py").read_bytes() == ORIGINAL
    assert (project / "old.txt").read_bytes() == b"old\n"
    assert not (project / "notes").exists()
    assert status  # the run changed files the user's git saw; undo put them back
