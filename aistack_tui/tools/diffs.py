"""Diffs of file changes as data: built once in the core, drawn by every front end.

Edit, Write and MultiEdit describe their change as a `FileDiff` (hunks of lines, each
tagged added / removed / context and numbered on both sides), carried to the front ends
in `ToolCallDisplay.diff`. The TUI pairs its side-by-side view from these lines, the line
mode numbers and colours them, and anything that wants text (a chat channel, a
transcript, print mode) asks for `unified()`: all from one `SequenceMatcher` pass, so no
view can disagree with another or with what is written, and nobody parses diff text back.

Lines are split on `\\n` only (not `str.splitlines`, which also breaks on form feeds and
Unicode separators and would misnumber source files). This module imports nothing of the
project, so front ends can import it as a value type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal, TypeAlias

LineKind: TypeAlias = Literal["added", "removed", "context"]

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_PREFIX: dict[LineKind, str] = {"added": "+", "removed": "-", "context": " "}
NO_NEWLINE_MARK = "\\ No newline at end of file"


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a hunk; a number is None on the side the line does not exist."""

    kind: LineKind
    text: str
    old_lineno: int | None
    new_lineno: int | None
    no_newline: bool = False
    """True for a last line that has no newline at the end of its file."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """A run of changes with its context; starts are 1-based (0 for an empty side)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[DiffLine, ...] = ()

    def header(self) -> str:
        old = _range(self.old_start, self.old_count)
        new = _range(self.new_start, self.new_count)
        return f"@@ -{old} +{new} @@"


@dataclass(frozen=True, slots=True)
class DiffStat:
    """Lines added and removed; prints as `+3 -1`, the form every summary uses."""

    added: int
    removed: int

    def __str__(self) -> str:
        return f"+{self.added} -{self.removed}"


@dataclass(frozen=True, slots=True)
class FileDiff:
    """The change to one file. False when nothing changes (a Write of the same text).

    `path` is the path as the user sees it (relative to the project when inside it).
    """

    path: str
    hunks: tuple[Hunk, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.hunks)

    def lines(self) -> list[DiffLine]:
        return [line for hunk in self.hunks for line in hunk.lines]

    def stat(self) -> DiffStat:
        """The one place lines are counted: context lines do not change the counts."""
        added = removed = 0
        for line in self.lines():
            if line.kind == "added":
                added += 1
            elif line.kind == "removed":
                removed += 1
        return DiffStat(added, removed)

    def unified(self) -> str:
        """A `git diff`-style unified diff (`--- a/… +++ b/…`); empty when nothing changed."""
        if not self.hunks:
            return ""
        path = self.path.lstrip("/")
        out = [f"--- a/{path}", f"+++ b/{path}"]
        for hunk in self.hunks:
            out.append(hunk.header())
            for line in hunk.lines:
                out.append(_PREFIX[line.kind] + line.text)
                if line.no_newline:
                    out.append(NO_NEWLINE_MARK)
        return "\n".join(out) + "\n"


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


def _line(kind: LineKind, raw: str, old: int | None, new: int | None) -> DiffLine:
    if raw.endswith("\n"):
        return DiffLine(kind, raw[:-1], old, new)
    return DiffLine(kind, raw, old, new, no_newline=True)


def file_diff(path: str, old: str, new: str, context: int = 3) -> FileDiff:
    """The changes from `old` to `new` as hunks with `context` unchanged lines around."""
    a, b = _LINE.findall(old), _LINE.findall(new)
    hunks: list[Hunk] = []
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        lines: list[DiffLine] = []
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                lines += (_line("context", a[x1 + k], x1 + k + 1, y1 + k + 1)
                          for k in range(x2 - x1))
                continue
            if tag in ("replace", "delete"):
                lines += (_line("removed", a[k], k + 1, None) for k in range(x1, x2))
            if tag in ("replace", "insert"):
                lines += (_line("added", b[k], None, k + 1) for k in range(y1, y2))
        hunks.append(
            Hunk(
                old_start=i1 + 1 if i2 > i1 else i1,
                old_count=i2 - i1,
                new_start=j1 + 1 if j2 > j1 else j1,
                new_count=j2 - j1,
                lines=tuple(lines),
            )
        )
    return FileDiff(path, tuple(hunks))
