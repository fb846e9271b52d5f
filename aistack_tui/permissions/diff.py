"""Diffs of file changes, built in the core and rendered by the front ends.

`diff_hunks` is the structured form (every line tagged and numbered on both sides) that
the TUI's side-by-side confirm view draws; `unified_diff` renders the same hunks as the
text a model or a terminal reads. Both come from one `SequenceMatcher` pass so the two
views can never disagree. Lines are split on `\\n` only (not `str.splitlines`, which also
breaks on form feeds and Unicode separators and would misnumber source files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal, TypeAlias

LineKind: TypeAlias = Literal["added", "removed", "context"]

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a hunk; a number is None on the side the line does not exist."""

    kind: LineKind
    text: str
    old_lineno: int | None
    new_lineno: int | None
    no_newline: bool = False
    """True for a last line that has no newline at the end of its file."""


@dataclass(slots=True)
class Hunk:
    """A run of changes with its context; starts are 1-based (0 for an empty side)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[DiffLine] = field(default_factory=list[DiffLine])

    def header(self) -> str:
        old = _range(self.old_start, self.old_count)
        new = _range(self.new_start, self.new_count)
        return f"@@ -{old} +{new} @@"


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


def _split(text: str) -> list[str]:
    return _LINE.findall(text)


def _line(kind: LineKind, raw: str, old: int | None, new: int | None) -> DiffLine:
    if raw.endswith("\n"):
        return DiffLine(kind, raw[:-1], old, new)
    return DiffLine(kind, raw, old, new, no_newline=True)


def diff_hunks(old: str, new: str, context: int = 3) -> list[Hunk]:
    """The changes from `old` to `new` as hunks with `context` unchanged lines around."""
    a, b = _split(old), _split(new)
    hunks: list[Hunk] = []
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        hunk = Hunk(
            old_start=i1 + 1 if i2 > i1 else i1,
            old_count=i2 - i1,
            new_start=j1 + 1 if j2 > j1 else j1,
            new_count=j2 - j1,
        )
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                for k in range(x2 - x1):
                    hunk.lines.append(_line("context", a[x1 + k], x1 + k + 1, y1 + k + 1))
                continue
            if tag in ("replace", "delete"):
                for k in range(x1, x2):
                    hunk.lines.append(_line("removed", a[k], k + 1, None))
            if tag in ("replace", "insert"):
                for k in range(y1, y2):
                    hunk.lines.append(_line("added", b[k], None, k + 1))
        hunks.append(hunk)
    return hunks


_PREFIX: dict[LineKind, str] = {"added": "+", "removed": "-", "context": " "}


def unified_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """A `git diff`-style unified diff of one file; empty when nothing changed."""
    hunks = diff_hunks(old, new, context)
    if not hunks:
        return ""
    path = path.lstrip("/")
    out = [f"--- a/{path}", f"+++ b/{path}"]
    for hunk in hunks:
        out.append(hunk.header())
        for line in hunk.lines:
            out.append(_PREFIX[line.kind] + line.text)
            if line.no_newline:
                out.append("\\ No newline at end of file")
    return "\n".join(out) + "\n"


def diff_stats(old: str, new: str) -> tuple[int, int]:
    """(lines added, lines removed), for summaries like `+3 -1`."""
    added = removed = 0
    for hunk in diff_hunks(old, new, context=0):
        for line in hunk.lines:
            if line.kind == "added":
                added += 1
            elif line.kind == "removed":
                removed += 1
    return added, removed
