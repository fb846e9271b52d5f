"""CheckpointManager against a real project directory and real git: byte-for-byte undo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from aistack_tui.checkpoints import CheckpointManager

SESSION = "sess-1"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def manager(git_repo: Path, aistack_home: Path) -> CheckpointManager:
    return CheckpointManager(aistack_home, git_repo)


def bash(repo: Path, command: str) -> None:
    """A side effect the way the Bash tool would cause it: a real shell command."""
    subprocess.run(["bash", "-c", command], cwd=repo, check=True)


async def test_undo_restores_edited_created_and_deleted_files_byte_for_byte(
    git_repo: Path, manager: CheckpointManager
) -> None:
    crlf = b"line one\r\nline two\r\n\r\nno newline at end"
    binary = bytes(range(256)) * 40
    (git_repo / "crlf.txt").write_bytes(crlf)
    (git_repo / "blob.bin").write_bytes(binary)
    (git_repo / "gone.txt").write_bytes(b"delete me\n")
    script = git_repo / "run.sh"
    script.write_bytes(b"#!/bin/sh\necho hi\n")
    script.chmod(0o755)

    await manager.snapshot(SESSION, "t1", "edit everything")
    (git_repo / "crlf.txt").write_bytes(b"rewritten\n")
    (git_repo / "blob.bin").write_bytes(b"\x00\x01")
    (git_repo / "gone.txt").unlink()
    (git_repo / "new" / "deep").mkdir(parents=True)
    (git_repo / "new" / "deep" / "created.py").write_text("x = 1\n")
    script.chmod(0o644)
    await manager.record_after(SESSION)

    result = await manager.undo_last(SESSION)

    assert result.ok, result.message
    assert (git_repo / "crlf.txt").read_bytes() == crlf
    assert (git_repo / "blob.bin").read_bytes() == binary
    assert (git_repo / "gone.txt").read_bytes() == b"delete me\n"
    assert not (git_repo / "new").exists()
    assert script.stat().st_mode & 0o111
    assert result.removed == ["new/deep/created.py"]
    assert sorted(result.restored) == ["blob.bin", "crlf.txt", "gone.txt", "run.sh"]


async def test_bash_side_effects_are_undone(git_repo: Path, manager: CheckpointManager) -> None:
    (git_repo / "config.ini").write_text("debug = false\nname = app\n")
    (git_repo / "notes.md").write_text("keep me\n")

    await manager.snapshot(SESSION, "t1", "sed and rm")
    bash(git_repo, "sed -i 's/false/true/' config.ini && rm notes.md && echo out > made.log")
    await manager.record_after(SESSION)
    assert (git_repo / "config.ini").read_text() == "debug = true\nname = app\n"

    result = await manager.undo_last(SESSION)

    assert result.ok
    assert (git_repo / "config.ini").read_text() == "debug = false\nname = app\n"
    assert (git_repo / "notes.md").read_text() == "keep me\n"
    assert not (git_repo / "made.log").exists()


async def test_crlf_survives_a_project_gitattributes_that_normalises_line_endings(
    git_repo: Path, manager: CheckpointManager
) -> None:
    (git_repo / ".gitattributes").write_text("* text=auto eol=lf\n")
    data = b"a\r\nb\r\n"
    (git_repo / "win.txt").write_bytes(data)
    await manager.snapshot(SESSION, "t1", "edit")
    (git_repo / "win.txt").write_bytes(b"changed\n")
    await manager.record_after(SESSION)

    assert (await manager.undo_last(SESSION)).ok
    assert (git_repo / "win.txt").read_bytes() == data


async def test_hand_edit_after_the_agent_is_a_conflict_unless_forced(
    git_repo: Path, manager: CheckpointManager
) -> None:
    (git_repo / "app.py").write_text("v = 1\n")
    await manager.snapshot(SESSION, "t1", "agent edit")
    (git_repo / "app.py").write_text("v = 2\n")
    await manager.record_after(SESSION)
    (git_repo / "app.py").write_text("v = 2  # my own tweak\n")

    refused = await manager.undo_last(SESSION)

    assert not refused.ok
    assert refused.conflicts == ["app.py"]
    assert "--force" in refused.message
    assert (git_repo / "app.py").read_text() == "v = 2  # my own tweak\n"

    forced = await manager.undo_last(SESSION, force=True)
    assert forced.ok
    assert (git_repo / "app.py").read_text() == "v = 1\n"


async def test_hand_edits_to_files_the_agent_did_not_touch_are_kept(
    git_repo: Path, manager: CheckpointManager
) -> None:
    (git_repo / "a.txt").write_text("a\n")
    await manager.snapshot(SESSION, "t1", "edit a")
    (git_repo / "a.txt").write_text("A\n")
    await manager.record_after(SESSION)
    (git_repo / "mine.txt").write_text("written by the user\n")

    assert (await manager.undo_last(SESSION)).ok
    assert (git_repo / "a.txt").read_text() == "a\n"
    assert (git_repo / "mine.txt").read_text() == "written by the user\n"


async def test_snapshots_within_a_turn_are_deduplicated(
    git_repo: Path, manager: CheckpointManager
) -> None:
    first = await manager.snapshot(SESSION, "t1", "one")
    (git_repo / "x").write_text("1")
    again = await manager.snapshot(SESSION, "t1", "one")
    assert first == again
    assert len(manager.list_turns(SESSION)) == 1


async def test_undo_twice_walks_back_turn_by_turn_and_rewind_goes_further(
    git_repo: Path, manager: CheckpointManager
) -> None:
    f = git_repo / "f.txt"
    for turn, text in enumerate(["one\n", "two\n", "three\n"], start=1):
        await manager.snapshot(SESSION, f"t{turn}", f"write {text.strip()}")
        f.write_text(text)
        await manager.record_after(SESSION)
    assert [t.turn_id for t in manager.list_turns(SESSION)] == ["t1", "t2", "t3"]

    assert (await manager.undo_last(SESSION)).ok
    assert f.read_text() == "two\n"
    result = await manager.rewind(SESSION, "t1")
    assert result.ok
    assert result.turns == ["t2", "t1"]
    assert not f.exists()  # t1 created it
    assert manager.list_turns(SESSION) == []
    assert not (await manager.undo_last(SESSION)).ok


async def test_rewind_accepts_a_position_and_rejects_an_unknown_turn(
    git_repo: Path, manager: CheckpointManager
) -> None:
    await manager.snapshot(SESSION, "msg_abc", "x")
    (git_repo / "x").write_text("x")
    await manager.record_after(SESSION)
    bad = await manager.rewind(SESSION, "nope")
    assert not bad.ok and "no turn" in bad.message
    assert (await manager.rewind(SESSION, "1")).ok
    assert not (git_repo / "x").exists()


async def test_the_users_git_repository_is_untouched(
    git_repo: Path, manager: CheckpointManager
) -> None:
    (git_repo / "README.md").write_text("# changed but not staged\n")
    (git_repo / "untracked.txt").write_text("u\n")
    status_before = git(git_repo, "status", "--porcelain=v1", "--untracked-files=all")
    log_before = git(git_repo, "log", "--all", "--format=%H %s")
    refs_before = git(git_repo, "for-each-ref")
    index_before = (git_repo / ".git" / "index").read_bytes()

    await manager.snapshot(SESSION, "t1", "edit")
    (git_repo / "README.md").write_text("# agent\n")
    await manager.record_after(SESSION)
    assert (await manager.undo_last(SESSION)).ok

    assert git(git_repo, "status", "--porcelain=v1", "--untracked-files=all") == status_before
    assert git(git_repo, "log", "--all", "--format=%H %s") == log_before
    assert git(git_repo, "for-each-ref") == refs_before
    assert (git_repo / ".git" / "index").read_bytes() == index_before
    assert manager.repo.git_dir.is_dir()
    assert git_repo not in manager.repo.git_dir.parents


async def test_gitignored_and_rebuilt_directories_are_not_snapshotted(
    git_repo: Path, manager: CheckpointManager
) -> None:
    (git_repo / ".gitignore").write_text("secret.out\n")
    (git_repo / "secret.out").write_text("ignored\n")
    (git_repo / "node_modules" / "pkg").mkdir(parents=True)
    (git_repo / "node_modules" / "pkg" / "index.js").write_text("x")
    await manager.snapshot(SESSION, "t1", "x")
    files = await manager.repo.git("ls-files")
    assert b"secret.out" not in files
    assert b"node_modules" not in files
    assert b"README.md" in files


async def test_checkpoints_are_off_in_a_home_directory(tmp_path: Path, aistack_home: Path) -> None:
    home = tmp_path / "user-home"
    manager = CheckpointManager(aistack_home, home)
    assert manager.disabled_reason
    assert await manager.snapshot(SESSION, "t1", "x") is None
    assert not (await manager.undo_last(SESSION)).ok
