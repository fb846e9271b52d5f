"""Wrap a notice's lines so that a long line continues under its own indent, plus a hang.

A notice is plain text that the terminal soft-wraps at column 0, so at 80 columns the
command list of `/help` (and `/status`, `/permissions`...) turned into a ragged block
where a description's second line stood where the next command should be. Wrapped here
at the widget's width instead, each continuation starts `HANG` columns right of its
line's own indent.
"""

from __future__ import annotations

import textwrap

HANG = 4
MIN_WIDTH = 24
"""Below this there is no room worth arranging: the terminal's own wrap does as well."""


def hang_wrap(text: str, width: int, first_width: int | None = None) -> str:
    """`text` with every line longer than `width` cells wrapped at spaces, continuations
    indented by the line's own indent plus `HANG`. `first_width` is the room on the
    first line, when something (an icon) stands before it. A word longer than the room
    is left whole for the terminal to fold."""
    if width < MIN_WIDTH:
        return text
    out: list[str] = []
    for number, line in enumerate(text.split("\n")):
        room = first_width if number == 0 and first_width is not None else width
        if len(line) <= room:
            out.append(line)  # as written: aligned columns, tabs and all
            continue
        indent = len(line) - len(line.lstrip(" "))
        out.extend(textwrap.wrap(line, max(room, MIN_WIDTH), subsequent_indent=" " * (
            indent + HANG), break_long_words=False, break_on_hyphens=False) or [line])
    return "\n".join(out)
