"""A file change (`FileDiff`, built by the core) as coloured lines for a scrolling terminal.

Removed lines red, added green, hunk headers cyan, each with the number it has in the
file (the old number for a removed line, the new one otherwise), so a reviewer can find
the place. Long diffs are cut with a line saying how much was left out; the approval
prompt shows more than a finished tool's line does. Drawn from the diff's typed lines:
nothing is parsed back from diff text.
"""

from __future__ import annotations

from rich.text import Text

from aistack_tui.tools.diffs import NO_NEWLINE_MARK, FileDiff

_STYLE = {"added": "green", "removed": "red", "context": ""}
_PREFIX = {"added": "+", "removed": "-", "context": " "}


def render_diff(diff: FileDiff, max_lines: int | None = None) -> Text:
    """The diff, coloured and numbered; at most `max_lines` body lines (None: all)."""
    out = Text()
    rows: list[tuple[str, int | None, str]] = []  # (style, number, text)
    for hunk in diff.hunks:
        rows.append(("cyan", None, hunk.header()))
        for line in hunk.lines:
            number = line.old_lineno if line.kind == "removed" else line.new_lineno
            rows.append((_STYLE[line.kind], number, _PREFIX[line.kind] + line.text))
            if line.no_newline:
                rows.append(("dim", None, "      " + NO_NEWLINE_MARK))
    for shown, (style, number, text) in enumerate(rows):
        if max_lines is not None and shown >= max_lines:
            out.append(f"      … {len(rows) - shown} more diff lines\n", style="dim")
            break
        if number is not None:
            out.append(f"{number:>5} ", style="dim")
        out.append(text + "\n", style=style)
    out.rstrip()
    return out
