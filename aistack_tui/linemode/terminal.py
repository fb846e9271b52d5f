"""When the line mode runs instead of the full-screen TUI, and the terminal it writes to.

An interactive run (stdin and stdout both terminals) gets the TUI unless one of these
says a full-screen app would not work or not help:
- `--classic` on the command line, or `AISTACK_CLASSIC=1` in the environment (for a
  screen reader user, who wants lines that are read once, in order);
- `TERM` is `dumb`, `unknown` or unset: the terminal cannot move its cursor (Emacs'
  `M-x shell` sets `TERM=dumb`);
- `INSIDE_EMACS` names `comint` (an Emacs shell buffer, whatever `TERM` says); Emacs'
  `vterm`, `eat` and `term` are real terminals and keep the TUI;
- the terminal reports no size, or one too small for the TUI's layout.
Runs whose stdin or stdout is not a terminal stay in print mode, as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports this module to choose a front end: keep it light
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
    from rich.console import Console

MIN_COLUMNS = 40
MIN_ROWS = 10
DUMB_TERMS = ("", "dumb", "unknown")


def line_mode_reason(
    env: Mapping[str, str], *, classic: bool = False, size: tuple[int, int] | None = None
) -> str | None:
    """Why an interactive run should use the line mode (None: the TUI will do).

    `size` is the terminal's (columns, rows), None when it could not be read.
    """
    if classic:
        return "--classic"
    if env.get("AISTACK_CLASSIC", "").strip().lower() in ("1", "true", "yes", "on"):
        return "AISTACK_CLASSIC is set"
    term = env.get("TERM", "").strip().lower()
    if term in DUMB_TERMS:
        return f"TERM={term or '(unset)'} cannot run a full-screen app"
    if "comint" in env.get("INSIDE_EMACS", ""):
        return "inside an Emacs shell buffer"
    if size is None or size[0] <= 0 or size[1] <= 0:
        return "the terminal reports no size"
    if size[0] < MIN_COLUMNS or size[1] < MIN_ROWS:
        return f"the terminal is {size[0]}x{size[1]}, too small for the full-screen app"
    return None


def terminal_size(fd: int = 1) -> tuple[int, int] | None:
    """(columns, rows) of the terminal on `fd`, None when it has none."""
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return None
    return size.columns, size.lines


@dataclass(slots=True)
class LineIO:
    """The terminal the line mode reads and writes: prompt_toolkit's input and output
    (None: the process's own terminal) and the Rich console for everything printed.
    Tests hand in a pipe input, a `DummyOutput` and a console writing to a buffer."""

    console: Console
    input: Input | None = None
    output: Output | None = None
    errors: Console | None = None
    """Where a fatal start-up error goes (stderr); None: `console`."""
