"""A shadow git repository that snapshots a project's working tree without touching it.

Every git command runs with `GIT_DIR` pointing at `$AISTACK_HOME/projects/<slug>/shadow.git`
and `GIT_WORK_TREE` at the project, and with every inherited `GIT_*` variable removed, so
the user's own repository (index, refs, history, hooks) is never read or written. The
shadow repo disables every content conversion (eol, filters, ident) through
`info/attributes`, which outranks the project's `.gitattributes`: what we store and what
we restore are the exact bytes that were on disk.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

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
        self._env = _clean_env(git_dir, work_tree)

    async def git(
        self, *args: str, stdin: bytes | None = None, check: bool = True, bare: bool = False
    ) -> bytes:
        """Run git against the shadow repo; returns stdout bytes."""
        env = self._env
        if bare:  # `git init` refuses a work tree in the environment
            env = {k: v for k, v in env.items() if k not in ("GIT_WORK_TREE", "GIT_INDEX_FILE")}
        proc = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=self.work_tree,
            env=env,
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
        """Create the repository on first use; refresh its exclude list every time."""
        if not (self.git_dir / "HEAD").is_file():
            self.git_dir.mkdir(parents=True, exist_ok=True)
            await self.git("init", "-q", "--bare", str(self.git_dir), bare=True)
            for key, value in (
                ("core.bare", "false"),
                ("core.autocrlf", "false"),
                ("core.safecrlf", "false"),
                ("core.symlinks", "true"),
                ("core.fileMode", "true"),
                ("core.longpaths", "true"),
                ("gc.auto", "0"),
                ("advice.addEmbeddedRepo", "false"),
                ("commit.gpgSign", "false"),
            ):
                await self.git("config", key, value)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        _write_if_changed(info / "attributes", NO_CONVERSION)
        _write_if_changed(info / "exclude", self._exclude_text())

    def _exclude_text(self) -> str:
        lines: list[str] = list(DEFAULT_EXCLUDES)
        user_exclude = self.work_tree / ".git" / "info" / "exclude"
        try:
            lines.append("# from the project's .git/info/exclude")
            lines.append(user_exclude.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            lines.pop()
        big = self.git_dir / "aistack-large-files"
        try:
            lines.append(big.read_text(encoding="utf-8"))
        except OSError:
            pass
        return "\n".join(lines).rstrip("\n") + "\n"

    async def _exclude_large_untracked(self) -> None:
        """Leave huge new files out: they would bloat the shadow repo and slow every turn."""
        out = await self.git("ls-files", "-z", "--others", "--exclude-standard")
        large: list[str] = []
        for raw in out.split(b"\0"):
            if not raw:
                continue
            rel = raw.decode("utf-8", "surrogateescape")
            try:
                if (self.work_tree / rel).lstat().st_size > MAX_FILE_BYTES:
                    large.append("/" + _escape_pattern(rel))
            except OSError:
                continue
        if large:
            big = self.git_dir / "aistack-large-files"
            existing = big.read_text(encoding="utf-8") if big.exists() else ""
            big.write_text(existing + "".join(f"{p}\n" for p in large), encoding="utf-8")
            _write_if_changed(self.git_dir / "info" / "exclude", self._exclude_text())

    async def write_tree(self) -> str:
        """Stage the whole working tree into the shadow index; return its tree id."""
        await self.ensure()
        await self._exclude_large_untracked()
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


def _clean_env(git_dir: Path, work_tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_INDEX_FILE=str(git_dir / "index"),
        GIT_LITERAL_PATHSPECS="1",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME="aistack",
        GIT_AUTHOR_EMAIL="checkpoints@aistack.invalid",
        GIT_COMMITTER_NAME="aistack",
        GIT_COMMITTER_EMAIL="checkpoints@aistack.invalid",
    )
    return env


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
