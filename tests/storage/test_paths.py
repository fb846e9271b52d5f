"""Where aistack keeps its files."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.storage.paths import (
    aistack_home,
    database_path,
    find_project_root,
    project_data_dir,
    project_slug,
)


def test_home_comes_from_env_or_defaults_to_dot_aistack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert aistack_home({"AISTACK_HOME": str(tmp_path / "h")}) == tmp_path / "h"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert aistack_home({"AISTACK_HOME": "~/x"}) == tmp_path / "x"
    assert aistack_home({}) == tmp_path / ".aistack"
    assert aistack_home({"AISTACK_HOME": "  "}) == tmp_path / ".aistack"


def test_home_defaults_to_the_process_environment(isolated_env: Path) -> None:
    assert aistack_home() == isolated_env  # the fixture set $AISTACK_HOME


def test_database_lives_in_home(tmp_path: Path) -> None:
    assert database_path(tmp_path) == tmp_path / "aistack.db"


def test_slug_is_readable_stable_and_unique_per_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = tmp_path / "one" / "My App!"
    b = tmp_path / "two" / "My App!"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    slug_a = project_slug(a)
    assert slug_a.startswith("my-app-")
    assert len(slug_a.rsplit("-", 1)[1]) == 10
    assert slug_a != project_slug(b)
    monkeypatch.chdir(tmp_path / "one")
    assert project_slug(Path("My App!")) == slug_a
    assert project_slug(a / ".." / "My App!") == slug_a
    assert project_slug(Path("/")).startswith("root-")


def test_project_data_dir_is_under_home_projects(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    home = tmp_path / "home"
    assert project_data_dir(home, root) == home / "projects" / project_slug(root)


def test_project_root_is_the_nearest_git_root(git_repo: Path) -> None:
    nested = git_repo / "src" / "pkg"
    nested.mkdir(parents=True)
    assert find_project_root(nested) == git_repo.resolve()
    assert find_project_root(git_repo) == git_repo.resolve()


def test_a_git_file_marks_a_worktree_root(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    (worktree / "deep").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert find_project_root(worktree / "deep") == worktree.resolve()


def test_without_git_the_cwd_is_the_root(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    assert find_project_root(plain) == plain.resolve()
