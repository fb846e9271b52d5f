"""aistack's own git (checkpoint, undo) never runs a program a sandboxed command could plant.

Each test plants a script that leaves a marker file when run, in one of the places git
reads a program name from (an fsmonitor, a hook, a clean filter), then takes a checkpoint,
changes a file, records it and undoes it, as a session and `aistack undo` do. The marker
must never appear, and undo must still work.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aistack_tui.checkpoints import CheckpointManager

SESSION = "sess-1"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "ran.txt"


@pytest.fixture
def payload(tmp_path: Path, marker: Path) -> Path:
    """A program that records that it ran (and, as an fsmonitor, fails so git moves on)."""
    script = tmp_path / "payload.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat >/dev/null\nexit 1\n')
    script.chmod(0o755)
    return script


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo, check=True, capture_output=True,
    )


def nested_repo(path: Path) -> None:
    """A repository inside the project with one committed file, as `git clone` leaves it."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "lib.txt").write_text("nested\n")
    (path / ".gitattributes").write_text("* filter=planted\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "nested")


def arm(git_dir: Path, payload: Path) -> None:
    """Name `payload` as the fsmonitor, the clean filter and every hook of `git_dir`."""
    config = git_dir / "config"
    with config.open("a") as f:
        f.write(
            f"[core]\n\tfsmonitor = {payload}\n"
            f'[filter "planted"]\n\tclean = {payload} clean\n\trequired = true\n'
        )
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("reference-transaction", "post-index-change", "pre-commit", "post-commit"):
        target = hooks / hook
        shutil.copy(payload, target)
        target.chmod(0o755)


async def checkpoint_and_undo(home: Path, project: Path, marker: Path) -> None:
    """Two turns, then undo both; the payload must not have run at any step."""
    manager = CheckpointManager(home, project)
    await manager.snapshot(SESSION, "t1", "edit")
    (project / "README.md").write_text("changed by the agent\n")
    if (project / "nested").exists():  # stat data changed: a status inside it must look
        (project / "nested" / "lib.txt").write_text("touched\n")
    await manager.record_after(SESSION)
    await manager.snapshot(SESSION, "t2", "second turn")  # a second snapshot: the index exists
    await manager.record_after(SESSION)
    results = [await manager.undo_last(SESSION), await manager.undo_last(SESSION)]
    assert not marker.exists(), marker.read_text()
    assert all(r.ok for r in results), [r.message for r in results]
    assert (project / "README.md").read_text() == "# test repo\n"


async def test_project_git_config_fsmonitor_never_runs(
    git_repo: Path, aistack_home: Path, payload: Path, marker: Path
) -> None:
    arm(git_repo / ".git", payload)
    await checkpoint_and_undo(aistack_home, git_repo, marker)


async def test_project_gitfile_with_commondir_never_runs(
    git_repo: Path, aistack_home: Path, payload: Path, marker: Path, tmp_path: Path
) -> None:
    """`.git` swapped for a gitfile whose gitdir names, through `commondir`, a copy of the
    repository with an fsmonitor in its config."""
    copy = tmp_path / "copy.git"
    shutil.copytree(git_repo / ".git", copy)
    arm(copy, payload)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "commondir").write_text(f"{copy}\n")
    (linked / "HEAD").write_text("ref: refs/heads/main\n")
    shutil.rmtree(git_repo / ".git")
    (git_repo / ".git").write_text(f"gitdir: {linked}\n")
    await checkpoint_and_undo(aistack_home, git_repo, marker)


async def test_nested_repository_config_never_runs(
    git_repo: Path, aistack_home: Path, payload: Path, marker: Path
) -> None:
    """A nested repository staged as a gitlink made every later `git add -A` run
    `git status` inside it, and with it that repository's fsmonitor and clean filter."""
    nested_repo(git_repo / "nested")
    arm(git_repo / "nested" / ".git", payload)
    await checkpoint_and_undo(aistack_home, git_repo, marker)
    assert (git_repo / "nested" / "lib.txt").read_text() == "touched\n"  # not ours to undo


async def test_nested_gitfile_with_commondir_never_runs(
    git_repo: Path, aistack_home: Path, payload: Path, marker: Path, tmp_path: Path
) -> None:
    """The nested repository's `.git` is a gitfile, its gitdir points through `commondir`
    at a copy whose config names the payload (as a submodule or linked worktree would)."""
    nested_repo(git_repo / "nested")
    copy = tmp_path / "nested-copy.git"
    shutil.move(git_repo / "nested" / ".git", copy)
    arm(copy, payload)
    admin = tmp_path / "admin"
    admin.mkdir()
    (admin / "commondir").write_text(f"{copy}\n")
    (admin / "HEAD").write_text((copy / "HEAD").read_text())
    shutil.copy(copy / "index", admin / "index")
    (git_repo / "nested" / ".git").write_text(f"gitdir: {admin}\n")
    await checkpoint_and_undo(aistack_home, git_repo, marker)


async def test_user_gitconfig_never_runs(
    git_repo: Path, aistack_home: Path, payload: Path, marker: Path
) -> None:
    """`~/.gitconfig` is writable from the sandbox when the project is the home directory;
    aistack's own git reads no user or system configuration."""
    hooks = Path.home() / "hooks"
    hooks.mkdir()
    shutil.copy(payload, hooks / "reference-transaction")
    (Path.home() / ".gitconfig").write_text(
        f"[core]\n\tfsmonitor = {payload}\n\thooksPath = {hooks}\n"
    )
    await checkpoint_and_undo(aistack_home, git_repo, marker)


async def test_planted_shadow_repository_config_and_hooks_never_run(
    git_repo: Path, aistack_home: Path, payload: Path, marker: Path
) -> None:
    """A confined command that could write the checkpoint repository (an AISTACK_HOME
    under a writable directory) plants an fsmonitor, a filter with attributes for it and
    hooks; aistack's own `git add -A`, commit and update-ref run none of them."""
    manager = CheckpointManager(aistack_home, git_repo)
    await manager.snapshot(SESSION, "t0", "create the shadow repository")
    shadow = manager.repo.git_dir
    arm(shadow, payload)
    (shadow / "info" / "attributes").write_text("* filter=planted\n")
    (git_repo / ".gitattributes").write_text("* filter=planted\n")
    await checkpoint_and_undo(aistack_home, git_repo, marker)
    assert "fsmonitor" not in (shadow / "config").read_text()


async def test_project_exclude_file_is_never_followed_out_of_the_project(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    """A confined command can turn `.git/info/exclude` into a link to a secrets file;
    the shadow repository copies the project's exclude list, but never through a link."""
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE-KEY-MATERIAL\n")
    exclude = git_repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(secret)
    manager = CheckpointManager(aistack_home, git_repo)
    await manager.snapshot(SESSION, "t1", "edit")
    copied = (manager.repo.git_dir / "info" / "exclude").read_text()
    assert "PRIVATE-KEY-MATERIAL" not in copied
    assert "node_modules/" in copied


async def test_project_exclude_file_still_applies(git_repo: Path, aistack_home: Path) -> None:
    (git_repo / ".git" / "info").mkdir(exist_ok=True)
    (git_repo / ".git" / "info" / "exclude").write_text("local-only.txt\n")
    (git_repo / "local-only.txt").write_text("x\n")
    manager = CheckpointManager(aistack_home, git_repo)
    before = await manager.snapshot(SESSION, "t1", "edit")
    assert before is not None
    assert "local-only.txt" not in (await manager.repo.entries(
        await manager.repo.tree_of(before), ["local-only.txt"]))


async def test_a_gitlink_left_by_an_older_version_is_dropped_before_any_status(
    git_repo: Path, aistack_home: Path, payload: Path, marker: Path
) -> None:
    """Shadow indexes written before nested repositories were left out hold gitlinks;
    each one made `git add -A` run a status inside the nested repository."""
    nested_repo(git_repo / "nested")
    manager = CheckpointManager(aistack_home, git_repo)
    await manager.snapshot(SESSION, "t0", "create the shadow repository")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=git_repo / "nested", check=True,
                          capture_output=True, text=True).stdout.strip()
    await manager.repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},nested")
    (manager.repo.git_dir / "aistack-gitlinks-dropped").unlink()
    (manager.repo.git_dir / "aistack-nested-repos").unlink()
    arm(git_repo / "nested" / ".git", payload)
    await checkpoint_and_undo(aistack_home, git_repo, marker)


def test_the_tui_header_reads_the_branch_without_running_git(
    git_repo: Path, payload: Path, marker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header's branch comes from `.git/HEAD` as a file: no git runs, so neither the
    project's fsmonitor nor anything else in its config (a guard for later changes: a
    `git status` there would run a planted clean filter, see `hardened_git`)."""
    from aistack_tui.tui.widgets.welcome import git_branch

    arm(git_repo / ".git", payload)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(payload, bin_dir / "git")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert git_branch(git_repo) == "main"
    assert not marker.exists()
