"""Render a unified diff (built by `permissions/diff.py` in the core) for the terminal.

Narrow terminals get the unified text, syntax-highlighted; wide ones get old and new side
by side, with removed and added runs paired line by line as `git difftool` shows them.
Parsing the unified text (rather than asking the tool for old and new contents again)
guarantees the dialog shows exactly what the core will write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

SIDE_BY_SIDE_MIN_WIDTH = 140
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a side-by-side view; a None side is blank (an added or removed line)."""

    old_no: int | None
    old: str | None
    new_no: int | None
    new: str | None
    kind: str  # "context" | "change" | "hunk"


def side_by_side_rows(diff: str) -> list[Row]:
    rows: list[Row] = []
    removed: list[tuple[int, str]] = []
    added: list[tuple[int, str]] = []
    old_no = new_no = 0

    def flush() -> None:
        for i in range(max(len(removed), len(added))):
            left = removed[i] if i < len(removed) else (None, None)
            right = added[i] if i < len(added) else (None, None)
            rows.append(Row(left[0], left[1], right[0], right[1], "change"))
        removed.clear()
        added.clear()

    for line in diff.splitlines():
        if line.startswith(("--- ", "+++ ")) and not rows and not removed and not added:
            continue
        match = _HUNK.match(line)
        if match:
            flush()
            old_no, new_no = int(match.group(1)), int(match.group(2))
            rows.append(Row(None, line, None, None, "hunk"))
        elif line.startswith("-"):
            removed.append((old_no, line[1:]))
            old_no += 1
        elif line.startswith("+"):
            added.append((new_no, line[1:]))
            new_no += 1
        elif line.startswith("\\"):
            continue
        else:
            flush()
            text = line[1:] if line.startswith(" ") else line
            rows.append(Row(old_no, text, new_no, text, "context"))
            old_no += 1
            new_no += 1
    flush()
    return rows


def diff_stat(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return added, removed


def render_diff(diff: str, width: int) -> RenderableType:
    """The diff for a terminal `width` columns wide."""
    if width < SIDE_BY_SIDE_MIN_WIDTH:
        return Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark", word_wrap=True)
    table = Table.grid(expand=True, padding=(0, 1))
    table.add_column(justify="right", style="dim", width=5)
    table.add_column(ratio=1)
    table.add_column(justify="right", style="dim", width=5)
    table.add_column(ratio=1)
    for row in side_by_side_rows(diff):
        if row.kind == "hunk":
            table.add_row("", Text(row.old or "", style="cyan"), "", "")
            continue
        left_style = "red" if row.kind == "change" and row.old is not None else ""
        right_style = "green" if row.kind == "change" and row.new is not None else ""
        table.add_row(
            "" if row.old_no is None or row.old is None else str(row.old_no),
            Text(row.old or "", style=left_style),
            "" if row.new_no is None or row.new is None else str(row.new_no),
            Text(row.new or "", style=right_style),
        )
    return table
