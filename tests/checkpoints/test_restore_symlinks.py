"""Undo and rewind never write or delete through a symlink a command planted in the project.

The attack (issue 21): a sandboxed command swaps a directory the turn touched for a link
to somewhere outside (`~`, `~/.config/...`) and hides it with `.gitignore`, so no
snapshot records the link; undo then restores the turn's files "into the project" and
writes or deletes through the link, outside any sandbox.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from aistack_tui.checkpoints import CheckpointManager

SESSION = "sess-1"


@pytest.fixture
def manager(git_repo: Path, aistack_home: Path) -> CheckpointManager:
    return CheckpointManager(aistack_home, git_repo)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "user-home"
    d.mkdir(exist_ok=True)
    (d / ".gitconfig").write_text("[user]\n\tname = me\n")
    return d


def plant_link(repo: Path, name: str, target: Path) -> None:
    """What the confined command does: move the directory away, link it out, hide it."""
    subprocess.run(
        ["bash", "-c", f"mv {name} {name}.bak 2>/dev/null; ln -s {target} {name}; "
                       f"printf '%s\\n' {name} {name}.bak >> .gitignore"],
        cwd=repo, check=True,
    )


async def test_undo_does_not_write_through_a_planted_directory_link(
    git_repo: Path, manager: CheckpointManager, outside: Path
) -> None:
    (git_repo / "conf").mkdir()
    (git_repo / "conf" / ".gitconfig").write_text("[core]\n\tproject = 1\n")
    await manager.snapshot(SESSION, "t1", "edit conf")
    (git_repo / "conf" / ".gitconfig").write_text("[core]\n\tproject = 2\n")
    plant_link(git_repo, "conf", outside)  # in the same batch, before the turn's `after`
    await manager.record_after(SESSION)
    before = (outside / ".gitconfig").read_bytes()

    result = await manager.undo_last(SESSION)

    assert (outside / ".gitconfig").read_bytes() == before
    assert result.refused == ["conf/.gitconfig"]
    assert "NOT restored" in result.message and "conf/.gitconfig" in result.message
    assert (git_repo / "conf").is_symlink()  # left as it is, for the user to look at


async def test_forced_undo_does_not_delete_through_a_planted_directory_link(
    git_repo: Path, manager: CheckpointManager, outside: Path
) -> None:
    await manager.snapshot(SESSION, "t1", "create sub/.gitconfig")
    (git_repo / "sub").mkdir()
    (git_repo / "sub" / ".gitconfig").write_text("made by the agent\n")
    await manager.record_after(SESSION)
    plant_link(git_repo, "sub", outside)

    result = await manager.undo_last(SESSION, force=True)

    assert (outside / ".gitconfig").exists()
    assert result.refused == ["sub/.gitconfig"]
    assert result.removed == []


async def test_a_link_at_the_restored_path_itself_is_replaced_not_followed(
    git_repo: Path, manager: CheckpointManager, outside: Path
) -> None:
    (git_repo / "notes.txt").write_text("original\n")
    await manager.snapshot(SESSION, "t1", "edit notes")
    (git_repo / "notes.txt").write_text("edited\n")
    await manager.record_after(SESSION)
    (git_repo / "notes.txt").unlink()
    (git_repo / "notes.txt").symlink_to(outside / ".gitconfig")
    before = (outside / ".gitconfig").read_bytes()

    result = await manager.undo_last(SESSION, force=True)

    assert result.ok, result.message
    assert (outside / ".gitconfig").read_bytes() == before
    assert not (git_repo / "notes.txt").is_symlink()
    assert (git_repo / "notes.txt").read_text() == "original\n"
