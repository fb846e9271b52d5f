"""List the files of a project worth indexing, the way git would see them.

Honours every `.gitignore` in the tree (deeper files override shallower ones, as in git)
plus `.aistackignore` files with the same syntax, and always skips version-control
folders, dependency and build folders, virtualenvs, files larger than `MAX_FILE_BYTES`
and files of unknown type. Only `os.scandir` stat data is read here; contents are read
by the parse workers, and only for files whose size or mtime changed.

What is injected into every request must never be what the user keeps from the model:
agent configuration (`.claude/`, `.agents/`, `.aistack/`, `.git/`, `.mcp.json`) and
secrets files (`.env*`, keys, `credentials.json`...) are never indexed, directory
symlinks are never followed, and a file symlink is indexed only when it resolves inside
the project and to a file that would be indexed itself.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from aistack_tui.knowledge.languages import language_for
from aistack_tui.permissions.paths import secret_parts

MAX_FILE_BYTES = 1_000_000
IGNORE_FILES = (".gitignore", ".aistackignore")
SKIP_DIRS: frozenset[str] = frozenset(
    {
        ".git", ".hg", ".svn", ".jj", ".aistack", ".idea", ".vscode",
        "node_modules", "bower_components", "vendor", "third_party", "third-party",
        "__pycache__", ".venv", "venv", ".tox", ".nox", ".eggs", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", ".cache", ".next", ".nuxt", ".gradle",
        "site-packages", "dist", "build", "target", "out", "coverage", ".terraform",
    }
)  # fmt: skip
SKIP_SUFFIXES = (".min.js", ".min.css", ".map", ".lock", "-lock.json", ".pb.go", "_pb2.py")
AGENT_CONFIG_DIRS: frozenset[str] = frozenset({".claude", ".agents", ".aistack", ".git"})
AGENT_CONFIG_FILES: frozenset[str] = frozenset({".mcp.json"})


def never_indexed(rel: str) -> bool:
    """Whether a project-relative POSIX path is agent configuration or a secrets file.

    Checked by the walker and again when the index answers, so an index built before
    this rule existed cannot hand such a file to the model either.
    """
    parts = [part for part in rel.split("/") if part not in ("", ".")]  # as `Path(rel).parts`
    if parts[-1:] and parts[-1] in AGENT_CONFIG_FILES:
        return True
    return any(p in AGENT_CONFIG_DIRS for p in parts[:-1]) or secret_parts(parts)


def resolved_inside(root: str, rel: str, real_root: str | None = None) -> str | None:
    """`root/rel` with every symlink resolved, relative to the resolved `root`, or None
    when it leads out of the project. `real_root` is `root` resolved already (a parse
    worker resolves it once per batch, not once per file). None too when the path
    changes while it is resolved (Python 3.11's `realpath` raises when a symlink it has
    just seen is swapped for a file): a path that will not hold still is not indexed."""
    real_root = real_root or os.path.realpath(root)
    try:
        real = os.path.realpath(os.path.join(real_root, rel))
    except OSError:
        return None
    return relative_inside(real_root, real)


def relative_inside(real_root: str, real: str) -> str | None:
    """`real` (a resolved path) relative to `real_root` as a POSIX path, or None when it
    is not below it."""
    prefix = real_root.rstrip(os.sep) + os.sep
    if not real.startswith(prefix):
        return None
    return real[len(prefix) :].replace(os.sep, "/")


def _symlink_ok(root: str, rel: str) -> bool:
    target = resolved_inside(root, rel)
    return target is not None and not never_indexed(target)


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """A candidate file: project-relative POSIX path, stat data and language."""

    path: str
    size: int
    mtime_ns: int
    language: str


def _load_spec(directory: str) -> pathspec.PathSpec | None:
    lines: list[str] = []
    for name in IGNORE_FILES:
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                lines.extend(f.read().splitlines())
        except OSError:
            continue
    if not lines:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(specs: list[tuple[str, pathspec.PathSpec]], rel: str, is_dir: bool) -> bool:
    """The verdict of the deepest ignore file with a matching pattern."""
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            return result.include
    return False


def walk(root: Path, part: int = 0, parts: int = 1) -> Iterator[WalkEntry]:
    """Yield the indexable files under `root` (not following directory symlinks).

    With `parts` > 1, only the files of the directories whose path hashes to `part`:
    every directory is still listed, and the checks of each file (most of a walk's time)
    are split, so the processes of a pool can walk one tree together."""
    root_str = str(root)
    # (relative dir, its specs stack)
    pending: list[tuple[str, list[tuple[str, pathspec.PathSpec]]]] = [("", [])]
    while pending:
        rel_dir, inherited = pending.pop()
        abs_dir = os.path.join(root_str, rel_dir) if rel_dir else root_str
        spec = _load_spec(abs_dir)
        specs = [*inherited, (rel_dir, spec)] if spec is not None else inherited
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[str] = []
        mine = parts == 1 or zlib.crc32(rel_dir.encode("utf-8", "surrogateescape")) % parts == part
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if _walk_into(entry, rel, specs):
                        subdirs.append(rel)
                    continue
                if not mine:
                    continue
                found = _indexable(entry, rel, root_str, specs)
            except OSError:
                continue
            if found is not None:
                yield found
        pending.extend((d, specs) for d in reversed(subdirs))


def _walk_into(
    entry: os.DirEntry[str], rel: str, specs: list[tuple[str, pathspec.PathSpec]]
) -> bool:
    """A directory worth walking: not a dependency, tool or build directory, not a
    virtual environment, not ignored."""
    name = entry.name
    if name in SKIP_DIRS or name in AGENT_CONFIG_DIRS or name.endswith(".egg-info"):
        return False
    if os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
        return False
    return not (specs and _ignored(specs, rel, True))


def _indexable(
    entry: os.DirEntry[str], rel: str, root: str, specs: list[tuple[str, pathspec.PathSpec]]
) -> WalkEntry | None:
    """The file as a walk entry, or None when it is not indexed (no parser for it, a
    skipped kind, a symlink leaving the root, ignored, empty or too big)."""
    if not entry.is_file():
        return None
    name = entry.name
    language = language_for(name)
    if language is None or name.endswith(SKIP_SUFFIXES) or never_indexed(rel):
        return None
    if entry.is_symlink() and not _symlink_ok(root, rel):
        return None
    if specs and _ignored(specs, rel, False):
        return None
    stat = entry.stat()
    if stat.st_size > MAX_FILE_BYTES or stat.st_size == 0:
        return None
    return WalkEntry(rel, stat.st_size, stat.st_mtime_ns, language)
