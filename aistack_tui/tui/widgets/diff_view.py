"""Draw a `FileDiff` (built by the core in `tools/diffs.py`) for the terminal.

Narrow terminals get the unified form, coloured line by line; wide ones get old and new
side by side, with removed and added runs paired line by line as `git difftool` shows
them. Both are drawn from the diff's typed, numbered lines: the dialog shows exactly the
change the core will write, and no diff text is parsed back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from aistack_tui.tools.diffs import NO_NEWLINE_MARK, DiffLine, FileDiff

SIDE_BY_SIDE_MIN_WIDTH = 140

# The colours of Rich's `ansi_dark` theme for diffs, which this view used before it drew
# from data; the tool cards and the confirm dialog look as they did.
REMOVED = "bright_red"
ADDED = "bright_green"
HUNK = "bold bright_magenta"
MARGIN = "bright_black"

RowKind: TypeAlias = Literal["context", "change", "hunk"]


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a side-by-side view; a None side is blank (an added or removed line).

    A hunk row carries its `@@ … @@` header in `old`.
    """

    old_no: int | None
    old: str | None
    new_no: int | None
    new: str | None
    kind: RowKind


def side_by_side_rows(diff: FileDiff) -> list[Row]:
    """The diff's lines as old | new rows: each run of removed lines is paired with the
    added run that follows it, the longer run's extra lines facing a blank."""
    rows: list[Row] = []
    for hunk in diff.hunks:
        rows.append(Row(None, hunk.header(), None, None, "hunk"))
        removed: list[DiffLine] = []
        added: list[DiffLine] = []
        for line in (*hunk.lines, None):
            if line is not None and line.kind == "removed":
                removed.append(line)
                continue
            if line is not None and line.kind == "added":
                added.append(line)
                continue
            for i in range(max(len(removed), len(added))):
                left = removed[i] if i < len(removed) else None
                right = added[i] if i < len(added) else None
                rows.append(Row(
                    left.old_lineno if left else None, left.text if left else None,
                    right.new_lineno if right else None, right.text if right else None,
                    "change",
                ))
            removed.clear()
            added.clear()
            if line is not None:
                rows.append(Row(line.old_lineno, line.text, line.new_lineno, line.text,
                                "context"))
    return rows


def unified_text(diff: FileDiff) -> Text:
    """The unified form (`--- a/…`, `@@ … @@`, `-`/`+`/` ` lines), coloured by kind."""
    out = Text()
    path = diff.path.lstrip("/")
    out.append(f"--- a/{path}", style=REMOVED)
    out.append("\n")
    out.append(f"+++ b/{path}", style=ADDED)
    for hunk in diff.hunks:
        out.append("\n")
        out.append(hunk.header(), style=HUNK)
        for line in hunk.lines:
            out.append("\n")
            if line.kind == "removed":
                out.append("-" + line.text, style=REMOVED)
            elif line.kind == "added":
                out.append("+" + line.text, style=ADDED)
            else:
                out.append(" ", style=MARGIN)
                out.append(line.text)
            if line.no_newline:
                out.append("\n" + NO_NEWLINE_MARK)
    return out


def render_diff(diff: FileDiff, width: int) -> RenderableType:
    """The diff for a terminal `width` columns wide."""
    if width < SIDE_BY_SIDE_MIN_WIDTH:
        return unified_text(diff)
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
            "" if row.old_no is None else str(row.old_no),
            Text(row.old or "", style=left_style),
            "" if row.new_no is None else str(row.new_no),
            Text(row.new or "", style=right_style),
        )
    return table
