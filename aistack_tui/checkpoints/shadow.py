"""A shadow git repository that snapshots a project's working tree without touching it.

Every git command runs with `GIT_DIR` pointing at `$AISTACK_HOME/projects/<slug>/shadow.git`
and `GIT_WORK_TREE` at the project, so the user's own repository (index, refs, history,
hooks) is never read or written. The shadow repo disables every content conversion (eol,
filters, ident) through `info/attributes`, which outranks the project's `.gitattributes`:
what we store and what we restore are the exact bytes that were on disk.

git runs hardened (`aistack_tui.hardened_git`): no hook, fsmonitor, pager or user and
system configuration, even if a confined command managed to edit the shadow repository.
Its settings live on git's command line and its `config` file is rewritten to a fixed
text before every snapshot, so a filter driver planted there is gone before `git add`
runs. A nested repository in the project (a directory holding its own `.git`, which may be
a gitfile or point elsewhere through `commondir`) is left out of snapshots altogether:
staging it as a gitlink makes `git add` run `git status` inside it on every later
snapshot, and that status would run the nested repository's fsmonitor, hooks and filters,
all of which a sandboxed command can write.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.beneath import locate
from aistack_tui.hardened_git import hardened_git

DEFAULT_EXCLUDES = (
    "# written by aistack: directories that are rebuilt, not authored",
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "*.pyc",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".gradle/",
    ".next/",
    ".cache/",
)
NO_CONVERSION = "* -text -filter -ident -working-tree-encoding -diff\n"
MAX_FILE_BYTES = 10 * 1024 * 1024
"""Untracked files above this size are left out of snapshots (build outputs, data dumps)."""
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_EXCLUDE_BYTES = 1024 * 1024
SHADOW_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.bare", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.fileMode", "true"),
    ("core.longpaths", "true"),
    ("advice.addEmbeddedRepo", "false"),
)
"""The shadow repository's settings, given on every git call."""
CONFIG_FILE_TEXT = (
    "# written by aistack and rewritten before every snapshot: anything added here is\n"
    "# dropped. The settings of this repository are on aistack's git command line.\n"
    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
)
STRAY_ADMIN_FILES = ("commondir", "config.worktree", "gitdir")
"""Files that would make git read its configuration or objects from somewhere else."""
NESTED_REPOS_FILE = "aistack-nested-repos"
GITLINKS_DROPPED_MARKER = "aistack-gitlinks-dropped"


class ShadowGitError(Exception):
    """A git command against the shadow repository failed; the message says which."""


@dataclass(frozen=True, slots=True)
class TreeEntry:
    mode: str
    sha: str
    path: str


class ShadowRepo:
    """Plumbing over the shadow repository of one project."""

    def __init__(self, git_dir: Path, work_tree: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self._env = _shadow_env(git_dir, work_tree)

    async def git(
        self, *args: str, stdin: bytes | None = None, check: bool = True, bare: bool = False
    ) -> bytes:
        """Run git against the shadow repo; returns stdout bytes."""
        env = self._env
        config = SHADOW_CONFIG
        if bare:  # `git init` refuses a work tree in the environment
            env = {k: v for k, v in env.items() if k not in ("GIT_WORK_TREE", "GIT_INDEX_FILE")}
            config = ()
        call = hardened_git(*args, env=env, config=config)
        proc = await asyncio.create_subprocess_exec(
            *call.argv,
            cwd=self.work_tree,
            env=call.env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate(stdin)
        if check and proc.returncode != 0:
            message = err.decode("utf-8", "replace").strip().splitlines()
            raise ShadowGitError(
                f"git {args[0]} failed in the checkpoint repository {self.git_dir}: "
                f"{message[-1] if message else f'exit {proc.returncode}'}"
            )
        return out

    async def ensure(self) -> None:
        """Create the repository on first use; every time, put back its fixed config,
        attributes and exclude list (whatever else was written into them is dropped)."""
        if not (self.git_dir / "HEAD").is_file():
            self.git_dir.mkdir(parents=True, exist_ok=True)
            await self.git("init", "-q", "--bare", str(self.git_dir), bare=True)
        for name in STRAY_ADMIN_FILES:
            with contextlib.suppress(FileNotFoundError):
                (self.git_dir / name).unlink()
        _write_if_changed(self.git_dir / "config", CONFIG_FILE_TEXT)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        _write_if_changed(info / "attributes", NO_CONVERSION)
        _write_if_changed(info / "exclude", self._exclude_text())
        await self._drop_gitlinks_once()

    def _exclude_text(self) -> str:
        lines: list[str] = list(DEFAULT_EXCLUDES)
        user_exclude = _read_project_exclude(self.work_tree)
        if user_exclude is not None:
            lines.append("# from the project's .git/info/exclude")
            lines.append(user_exclude)
        big = self.git_dir / "aistack-large-files"
        try:
            lines.append(big.read_text(encoding="utf-8"))
        except OSError:
            pass
        nested = self._nested_repos()
        if nested:
            lines.append("# nested repositories: never staged (see the module docstring)")
            lines += ["/" + _escape_pattern(rel) + "/" for rel in nested]
        return "\n".join(lines).rstrip("\n") + "\n"

    def _nested_repos(self) -> list[str]:
        """The nested repositories left out so far that still are repositories (one that
        lost its `.git` is a plain directory again, and its files are snapshotted)."""
        path = self.git_dir / NESTED_REPOS_FILE
        try:
            known = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        kept = [rel for rel in known if rel and os.path.lexists(self.work_tree / rel / ".git")]
        if kept != known:
            path.write_text("".join(f"{rel}\n" for rel in kept), encoding="utf-8")
        return kept

    async def _exclude_untracked_outliers(self) -> None:
        """Leave out huge new files (they would bloat the shadow repo and slow every turn)
        and nested repositories (git lists one as `dir/`; see the module docstring)."""
        out = await self.git("ls-files", "-z", "--others", "--exclude-standard")
        large: list[str] = []
        nested: list[str] = []
        for raw in out.split(b"\0"):
            if not raw:
                continue
            rel = raw.decode("utf-8", "surrogateescape")
            if rel.endswith("/"):
                nested.append(rel.rstrip("/"))
                continue
            try:
                if (self.work_tree / rel).lstat().st_size > MAX_FILE_BYTES:
                    large.append("/" + _escape_pattern(rel))
            except OSError:
                continue
        if large:
            big = self.git_dir / "aistack-large-files"
            existing = big.read_text(encoding="utf-8") if big.exists() else ""
            big.write_text(existing + "".join(f"{p}\n" for p in large), encoding="utf-8")
        if nested:
            known = self._nested_repos()
            lines = known + [rel for rel in nested if rel not in known]
            (self.git_dir / NESTED_REPOS_FILE).write_text(
                "".join(f"{rel}\n" for rel in lines), encoding="utf-8"
            )
        if large or nested:
            _write_if_changed(self.git_dir / "info" / "exclude", self._exclude_text())

    async def _drop_gitlinks_once(self) -> None:
        """Take out of the index the nested repositories that older versions staged as
        gitlinks: while one is in the index, every `git add -A` runs a status inside it."""
        marker = self.git_dir / GITLINKS_DROPPED_MARKER
        if marker.exists():
            return
        if (self.git_dir / "index").exists():
            out = await self.git("ls-files", "-z", "--stage")
            links = [
                name for meta, _, name in (r.partition(b"\t") for r in out.split(b"\0") if r)
                if meta.startswith(b"160000 ")
            ]
            if links:
                await self.git(
                    "update-index", "-z", "--force-remove", "--stdin",
                    stdin=b"".join(name + b"\0" for name in links),
                )
        marker.write_text("gitlinks are never staged\n", encoding="utf-8")

    async def write_tree(self) -> str:
        """Stage the whole working tree into the shadow index; return its tree id."""
        await self.ensure()
        await self._exclude_untracked_outliers()
        await self.git("add", "-A", "--ignore-errors", "--", ".", check=False)
        return (await self.git("write-tree")).decode().strip()

    async def commit(self, tree: str, parent: str | None, message: str) -> str:
        args = ["commit-tree", tree, "-m", message]
        if parent:
            args += ["-p", parent]
        return (await self.git(*args)).decode().strip()

    async def update_ref(self, ref: str, commit: str) -> None:
        await self.git("update-ref", ref, commit)

    async def tree_of(self, commit: str) -> str:
        return (await self.git("rev-parse", f"{commit}^{{tree}}")).decode().strip()

    async def changed_paths(self, a: str, b: str, paths: list[str] | None = None) -> set[str]:
        """Paths whose content or mode differ between two trees or commits."""
        if paths is not None and not paths:
            return set()
        args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b]
        if paths is not None:
            args += ["--", *paths]
        out = await self.git(*args)
        return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}

    async def entries(self, tree: str, paths: list[str]) -> dict[str, TreeEntry]:
        """The blob entries of `paths` in `tree` (missing paths are absent from the map)."""
        found: dict[str, TreeEntry] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start : start + 500]
            out = await self.git("ls-tree", "-r", "-z", "--full-tree", tree, "--", *chunk)
            for record in out.split(b"\0"):
                if not record:
                    continue
                meta, _, name = record.partition(b"\t")
                mode, _kind, sha = meta.decode().split(" ")
                path = name.decode("utf-8", "surrogateescape")
                found[path] = TreeEntry(mode, sha, path)
        return found

    async def blob(self, sha: str) -> bytes:
        return await self.git("cat-file", "blob", sha)


def _shadow_env(git_dir: Path, work_tree: Path) -> dict[str, str]:
    """The variables naming the shadow repository; `hardened_git` adds the rest."""
    return {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(work_tree),
        "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_LITERAL_PATHSPECS": "1",
        "GIT_AUTHOR_NAME": "aistack",
        "GIT_AUTHOR_EMAIL": "checkpoints@aistack.invalid",
        "GIT_COMMITTER_NAME": "aistack",
        "GIT_COMMITTER_EMAIL": "checkpoints@aistack.invalid",
    }


def _read_project_exclude(work_tree: Path) -> str | None:
    """The project's `.git/info/exclude`, walked beneath the project without following a
    symlink: a command can make it a link to `~/.ssh/id_rsa` or `/proc/self/environ`, whose
    content would otherwise be copied into the shadow repository."""
    try:
        with locate(work_tree, [".git", "info", "exclude"], follow=False) as found:
            return found.read(MAX_EXCLUDE_BYTES).decode("utf-8", "replace")
    except OSError:  # missing, a gitfile, a link or not a regular file (UnsafePath)
        return None


def _escape_pattern(path: str) -> str:
    for ch in "\\*?[!# ":
        path = path.replace(ch, "\\" + ch)
    return path


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.write_text(text, encoding="utf-8")
