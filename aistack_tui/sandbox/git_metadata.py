"""A repository's metadata as the sandbox sees it: what in it runs programs.

git runs programs its metadata names (hooks, `core.fsmonitor`, `diff.external`...) and
follows indirections to other repositories (`commondir`, a `.git` file). A command that
runs git may write the repository's objects, refs and index, never these
(`git_paths`); a repository a command created during the session is checked when it
appears, and moved out of git's way when it would run a program (`quarantine_new_git`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

# Inside a git directory, what makes git run a program or read another repository's: kept
# read-only even for a command that runs git (absent ones get a placeholder).
GIT_ADMIN: tuple[str, ...] = ("config", "config.worktree", "hooks", "info", "commondir")
GIT_ADMIN_ABSENT: tuple[str, ...] = ("hooks", "info", "commondir", "config.worktree")
GIT_ADMIN_FILES: frozenset[str] = frozenset({"commondir", "config.worktree"})
GIT_WORKTREE_ADMIN: tuple[str, ...] = ("commondir", "gitdir", "config.worktree")


# Configuration keys with which git runs a program (matched on the lower-cased key: its
# first and last components, any subsection between).
_RUNS_PROGRAM = frozenset({
    "core.fsmonitor", "core.hookspath", "core.pager", "core.editor", "core.sshcommand",
    "core.askpass", "core.gitproxy", "core.alternaterefscommand", "sequence.editor",
    "diff.external", "diff.command", "diff.textconv", "merge.driver", "filter.clean",
    "filter.smudge", "filter.process", "credential.helper", "gpg.program",
    "uploadpack.packobjectshook", "interactive.difffilter", "web.browser", "browser.cmd",
    "remote.uploadpack", "remote.receivepack", "include.path", "includeif.path",
    "pager.*", "alias.*", "man.cmd", "difftool.cmd", "mergetool.cmd",
})


def config_runs_program(config: Path) -> str | None:
    """The first key of a git config file that would make git run a program, or None.

    Read by git itself (`--no-includes`: reading runs nothing), so a file git cannot parse
    counts as dangerous too: git would refuse it or read it differently from us.
    """
    try:
        out = subprocess.run(
            ["git", "config", "--file", str(config), "--no-includes", "--list", "--null"],
            capture_output=True, timeout=10, check=False,
            env={"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1",
                 "GIT_CONFIG_GLOBAL": os.devnull, "HOME": os.devnull},
        )
    except (OSError, subprocess.TimeoutExpired):
        return "an unreadable configuration"
    if out.returncode != 0:
        return "a configuration git cannot parse"
    for item in out.stdout.split(b"\0"):
        key = item.split(b"\n", 1)[0].decode(errors="replace").lower()
        if not key:
            continue
        parts = key.split(".")
        short = f"{parts[0]}.{parts[-1]}"
        if short in _RUNS_PROGRAM or f"{parts[0]}.*" in _RUNS_PROGRAM:
            if parts[0] == "alias" and not item.split(b"\n", 1)[-1].startswith(b"!"):
                continue  # an alias to another git command runs nothing
            return key
    return None


def git_dir_runs_program(git_dir: Path) -> str | None:
    """Why a repository's metadata would run a program (hooks, config, indirections)."""
    if git_dir.is_file() or git_dir.is_symlink():
        return "a .git file or link pointing at another directory"
    if (git_dir / "commondir").exists():
        return "a commondir pointing at another repository"
    hooks = git_dir / "hooks"
    with contextlib.suppress(OSError):
        for hook in hooks.iterdir():
            if not hook.name.endswith(".sample"):
                return f"a hook ({hook.name})"
    for config in [git_dir / "config", git_dir / "config.worktree"]:
        if config.exists():
            why = config_runs_program(config)
            if why is not None:
                return f"{config.name} sets {why}"
    return None


def quarantine_new_git(entry: Path) -> Path | None:
    """Move a repository's metadata out of git's way (`git init` plus a `core.fsmonitor`,
    or a `.git` file pointing at such a directory, which the user's next `git status`
    there would run outside any sandbox). Returns where it went, None if it could not."""
    target = entry.with_name(f".git.quarantined-by-aistack-{int(time.time())}")
    try:
        entry.rename(target)
    except OSError:
        return None
    return target


def git_paths(entries: Sequence[Path], git: bool) -> tuple[list[Path], list[Path], list[Path]]:
    """(frozen, pinned, placeholders) for the repositories' metadata.

    Without git the whole `.git` (directory or file) is read-only. With git the directory
    is pinned (it cannot be renamed or replaced) and writable, but not what runs programs
    or points elsewhere: GIT_ADMIN, and in submodules' and worktrees' admin directories
    the same files.
    """
    frozen: list[Path] = []
    pinned: list[Path] = []
    absent: list[Path] = []
    for entry in entries:
        if not entry.is_dir() or entry.is_symlink():
            frozen.append(entry)
            continue
        if not git:
            frozen.append(entry)
            continue
        pinned.append(entry)
        for admin in [entry, *_nested_git_dirs(entry)]:
            for name in GIT_ADMIN:
                if os.path.lexists(admin / name):
                    frozen.append(admin / name)
            for name in GIT_ADMIN_ABSENT:
                if not os.path.lexists(admin / name):
                    absent.append(admin / name)
        worktrees = entry / "worktrees"
        with contextlib.suppress(OSError):
            for tree in worktrees.iterdir():
                for name in GIT_WORKTREE_ADMIN:
                    if os.path.lexists(tree / name):
                        frozen.append(tree / name)
    return frozen, pinned, absent


def _nested_git_dirs(git_dir: Path) -> list[Path]:
    """Submodules' git directories (`modules/<name>`, nested any depth)."""
    out: list[Path] = []
    stack = [git_dir / "modules"]
    while stack and len(out) < 100:
        current = stack.pop()
        try:
            children = [c for c in current.iterdir() if c.is_dir() and not c.is_symlink()]
        except OSError:
            continue
        for child in children:
            if (child / "HEAD").exists():
                out.append(child)
                stack.append(child / "modules")
            else:
                stack.append(child)
    return out
