"""A unified diff as coloured lines for a scrolling terminal.

The core builds the diff; this only colours it: removed lines red, added green, hunk
headers cyan, each with the line number it has in the file (new numbers for added and
context lines, old numbers for removed ones), so a reviewer can find the place. Long
diffs are cut with a line saying how much was left out; the approval prompt shows more
than a finished tool's line does.
"""

from __future__ import annotations

import re

from rich.text import Text

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def diff_stat(diff: str) -> tuple[int, int]:
    """(added, removed) line counts of a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return added, removed


def render_diff(diff: str, max_lines: int | None = None) -> Text:
    """The diff, coloured and numbered; at most `max_lines` body lines (None: all)."""
    out = Text()
    old_no = new_no = 0
    body = [line for line in diff.splitlines() if not line.startswith(("--- ", "+++ "))]
    for shown, line in enumerate(body):
        if max_lines is not None and shown >= max_lines:
            out.append(f"      … {len(body) - shown} more diff lines\n", style="dim")
            break
        match = _HUNK.match(line)
        if match:
            old_no, new_no = int(match.group(1)), int(match.group(2))
            out.append(line + "\n", style="cyan")
        elif line.startswith("-"):
            out.append(f"{old_no:>5} ", style="dim")
            out.append(line + "\n", style="red")
            old_no += 1
        elif line.startswith("+"):
            out.append(f"{new_no:>5} ", style="dim")
            out.append(line + "\n", style="green")
            new_no += 1
        elif line.startswith("\\"):
            out.append("      " + line + "\n", style="dim")
        else:
            out.append(f"{new_no:>5} ", style="dim")
            out.append(line + "\n")
            old_no += 1
            new_no += 1
    out.rstrip()
    return out
