"""Keys typed while the interactive app starts are kept, as typed, for its prompt.

Between the shell handing over the terminal and the app's first frame (imports, settings,
the UI toolkit: most of a second on a busy machine) the terminal is still in the shell's
cooked mode: typed keys are echoed where the app will draw, a partly typed line is
withheld from the reader, and Enter arrives as a newline (ctrl+j, "new line" in the
prompt) instead of Enter. Switching to the app's input mode at once (no echo, no line
buffering, Enter as Enter), without discarding anything already typed, lets the first
frame's prompt receive every key typed since the launch; the terminal's own settings are
restored when the app ends.

The switch cannot undo what cooked mode already did to the keys waiting in the terminal:
an Enter typed before it was turned into a newline as it arrived. Those keys are read at
the switch and handed to the app, which types them into its prompt before any key it
reads itself, a newline among them as Enter (`tui/typeahead.py`). Left in the terminal,
they could be read after the first frame (the app's input thread is late on a busy
machine) and the Enter would land in the prompt as a new line instead of sending it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

KEY_REST_S = 0.05
"""How long the rest of a key cut in two by the switch (a UTF-8 character, an escape
sequence) is waited for."""


@contextlib.contextmanager
def typeahead_kept(fd: int = 0) -> Iterator[bytes]:
    """Switch `fd`'s terminal to the app's input mode until the block ends; the block gets
    the keys typed before the switch, read from the terminal (b"" if it is no terminal)."""
    try:
        import termios
    except ImportError:  # not a POSIX terminal
        yield b""
        return
    try:
        before = termios.tcgetattr(fd)
    except (termios.error, OSError):
        yield b""
        return
    attrs = list(before)
    attrs[0] &= ~termios.ICRNL  # iflag: Enter stays Enter
    attrs[3] &= ~(termios.ICANON | termios.ECHO)  # lflag: readable at once, not echoed
    try:
        termios.tcsetattr(fd, termios.TCSANOW, attrs)  # TCSANOW: typed keys stay queued
        yield typed_before(fd)
    finally:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, before)


def typed_before(fd: int) -> bytes:
    """Read, without waiting, what the terminal holds for its reader (out of cooked mode, a
    partly typed line too); a key it ends in the middle of is read whole."""
    import time

    data = _read_waiting(fd, 0.0)
    deadline = time.monotonic() + KEY_REST_S
    while data and cut_short(data):
        more = _read_waiting(fd, deadline - time.monotonic())
        if not more:
            break
        data += more
    return data


def _read_waiting(fd: int, timeout: float) -> bytes:
    import fcntl
    import select
    import struct
    import termios

    try:
        if not select.select([fd], [], [], max(timeout, 0.0))[0]:
            return b""
        size: int = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
        return os.read(fd, size) if size > 0 else b""  # at most what waits: never blocks
    except OSError:
        return b""


def cut_short(data: bytes) -> bool:
    """Whether `data` ends inside a key: a UTF-8 character or an escape sequence."""
    continuation = 0
    while continuation < min(3, len(data)) and 0x80 <= data[-1 - continuation] < 0xC0:
        continuation += 1
    if continuation < len(data):
        lead = data[-1 - continuation]  # 110xxxxx, 1110xxxx, 11110xxx: 2, 3, 4 bytes long
        length = next((n for n, top in ((4, 0xF0), (3, 0xE0), (2, 0xC0)) if lead >= top), 1)
        if lead < 0xF8 and continuation + 1 < length:
            return True
    sequence = data[data.rfind(b"\x1b"):] if b"\x1b" in data[-32:] else b""
    if sequence in (b"\x1b", b"\x1b[", b"\x1bO"):
        return True
    # CSI (ESC [): parameters up to a final byte in @..~
    return sequence[:2] == b"\x1b[" and not any(0x40 <= b <= 0x7E for b in sequence[2:])
