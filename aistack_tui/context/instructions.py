"""Instruction and identity files, read as Claude Code and the personal-agent seed read them.

Instruction files, in the order they enter the system prompt (later ones are more
specific and win where they disagree):

1. the user's: `~/.claude/CLAUDE.md` (Claude Code's user memory) and
   `$AISTACK_HOME/AGENTS.md`;
2. the project's, from the project root down to the working directory: `AGENTS.md`,
   `CLAUDE.md`, `GEMINI.md` and `CLAUDE.local.md` (your own, usually git-ignored).

A `CLAUDE.md` or `CLAUDE.local.md` may import other files with `@path` (relative to the
file, or `@~/...` in the user's home), as Claude Code's memory files do: imports are
followed up to `MAX_IMPORT_DEPTH` hops, never inside code spans or fenced blocks, each file
once. A word after `@` that names no file is left alone (it is likely an @-mention).

Identity files (`IDENTITY.md`, `SOUL.md`, `USER.md`, `memory/MEMORY.md`): who the agent
is, how it speaks, what it knows of you, what it remembers. Read from `$AISTACK_HOME` and,
once the project is trusted (they change who the agent is), from the project's
`.aistack/`.

Every file is committed or user-written input that reaches every request with no tool
call, so each is read beneath its own root (the project's beneath the project, the user's
beneath the home it lives in), following only links that stay inside, regular files only,
capped; one that leaves is skipped with a warning saying why.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.beneath import UnsafePath, locate_path, real_dir

PROJECT_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", "CLAUDE.local.md")
IMPORTING_FILES = frozenset({"CLAUDE.md", "CLAUDE.local.md"})
IDENTITY_FILES = ("IDENTITY.md", "SOUL.md", "USER.md", "memory/MEMORY.md")
MAX_INSTRUCTION_BYTES = 40_000
MAX_IMPORT_DEPTH = 5
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`[^`]*`")
_IMPORT = re.compile(r"(?<![\w@/.`])@((?:~/)?[\w.\-/]+)")


@dataclass(frozen=True, slots=True)
class InstructionFile:
    path: Path
    text: str
    kind: str = "instructions"
    """`instructions` (AGENTS.md, CLAUDE.md ...), `import` (reached by an @path) or
    `identity` (IDENTITY.md, SOUL.md ...)."""


class _Reader:
    """Reads files beneath their roots, once each, collecting warnings."""

    def __init__(self, warnings: list[str] | None) -> None:
        self.warnings = warnings
        self.seen: set[Path] = set()

    def read(self, path: Path, base: Path) -> tuple[Path, str] | None:
        try:
            with locate_path(path, [base]) as file:
                if file.kind in ("missing", "dir") or file.path in self.seen:
                    return None
                self.seen.add(file.path)
                real = file.path
                data = file.read(MAX_INSTRUCTION_BYTES)
        except UnsafePath as e:
            if self.warnings is not None:
                self.warnings.append(
                    f"{path} was not loaded as instructions: {e}. Instruction files are "
                    f"read only as regular files beneath {base}."
                )
            return None
        except OSError:
            return None
        text = data.decode("utf-8", errors="replace").strip()
        return (real, text) if text else None


def import_targets(text: str) -> list[str]:
    """The `@path` words of a memory file, outside fenced blocks and code spans."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        found += _IMPORT.findall(_CODE_SPAN.sub("", line))
    return [t.rstrip(".") for t in found if t.rstrip(".")]


def _with_imports(
    reader: _Reader, path: Path, text: str, base: Path, user_home: Path, depth: int = 0
) -> list[InstructionFile]:
    """The file, then what it imports (depth first, each once), all beneath `base`."""
    out = [InstructionFile(path, text, "import" if depth else "instructions")]
    if path.name not in IMPORTING_FILES and depth == 0:
        return out
    if depth >= MAX_IMPORT_DEPTH:
        return out
    for target in import_targets(text):
        if target.startswith("~/"):
            candidate, root = user_home / target[2:], user_home
        else:
            candidate, root = path.parent / target, base
        if not _inside(candidate, root):
            if reader.warnings is not None:
                reader.warnings.append(
                    f"{path}: @{target} was not imported: it is outside {root}"
                )
            continue
        found = reader.read(candidate, root)
        if found is not None:
            out += _with_imports(reader, found[0], found[1], root, user_home, depth + 1)
    return out


def _inside(path: Path, root: Path) -> bool:
    return Path(os.path.normpath(path)).is_relative_to(root)


def find_instruction_files(
    project_root: Path,
    cwd: Path,
    home: Path,
    warnings: list[str] | None = None,
    *,
    user_home: Path | None = None,
) -> list[InstructionFile]:
    """The user's and the project's instruction files with their imports, in prompt
    order (see the module docstring). `home` is aistack's home, `user_home` the user's."""
    reader = _Reader(warnings)
    root = real_dir(project_root)
    here = real_dir(cwd)
    aistack_home = real_dir(home)
    user = real_dir(user_home) if user_home is not None else None
    candidates: list[tuple[Path, Path]] = []
    if user is not None:
        candidates.append((user / ".claude" / "CLAUDE.md", user))
    candidates.append((aistack_home / "AGENTS.md", aistack_home))
    dirs = [root]
    if here != root and here.is_relative_to(root):
        for part in here.relative_to(root).parts:
            dirs.append(dirs[-1] / part)
    for directory in dirs:
        candidates.extend((directory / name, root) for name in PROJECT_FILES)
    found: list[InstructionFile] = []
    for path, base in candidates:
        read = reader.read(path, base)
        if read is not None:
            found += _with_imports(reader, read[0], read[1], base, user or aistack_home)
    return found


def identity_locations(home: Path, project_root: Path, project: bool) -> list[tuple[Path, Path]]:
    """(file, root) of every identity file to look for: aistack's home, then (when
    `project`, i.e. trusted) the project's `.aistack/`."""
    places = [(real_dir(home), real_dir(home))]
    if project:
        root = real_dir(project_root)
        places.append((root / ".aistack", root))
    return [(folder / name, root) for folder, root in places for name in IDENTITY_FILES]


def find_identity_files(
    home: Path, project_root: Path, *, project: bool, warnings: list[str] | None = None
) -> list[InstructionFile]:
    reader = _Reader(warnings)
    out: list[InstructionFile] = []
    for path, root in identity_locations(home, project_root, project):
        read = reader.read(path, root)
        if read is not None:
            out.append(InstructionFile(read[0], read[1], "identity"))
    return out
