"""Keys typed while the interactive app starts are kept, as typed, for its prompt.

Between the shell handing over the terminal and the app's first frame (imports, settings,
the UI toolkit: most of a second on a busy machine) the terminal is still in the shell's
cooked mode: typed keys are echoed where the app will draw, a partly typed line is
withheld from the reader, and Enter arrives as a newline (ctrl+j, "new line" in the
prompt) instead of Enter. Switching to the app's input mode at once (no echo, no line
buffering, Enter as Enter), without discarding anything already typed, lets the first
frame's prompt receive every key typed since the launch; the terminal's own settings are
restored when the app ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def typeahead_kept(fd: int = 0) -> Iterator[None]:
    try:
        import termios
    except ImportError:  # not a POSIX terminal
        yield
        return
    try:
        before = termios.tcgetattr(fd)
    except (termios.error, OSError):
        yield
        return
    attrs = list(before)
    attrs[0] &= ~termios.ICRNL  # iflag: Enter stays Enter
    attrs[3] &= ~(termios.ICANON | termios.ECHO)  # lflag: readable at once, not echoed
    try:
        termios.tcsetattr(fd, termios.TCSANOW, attrs)  # TCSANOW: typed keys stay queued
        yield
    finally:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, before)
