"""A closed stdout or stderr is the reader going away, not an error (as for any Unix
filter piped into `head`): the front end stops writing and exits 141, quietly.

Python ignores SIGPIPE, so a write to a closed pipe raises BrokenPipeError instead of
ending the process; a terminal that went away (SIGHUP) gives EIO; a stream closed in
our own process gives ValueError. After one of those, the stream's file descriptor is
pointed at /dev/null, so the interpreter's last flush at exit has somewhere to write
(otherwise it prints "Exception ignored ... BrokenPipeError" and exits 120).
"""

from __future__ import annotations

import contextlib
import errno
import os
from typing import TextIO

_GONE = (errno.EPIPE, errno.EIO)


def is_closed_stream(exc: BaseException) -> bool:
    """True when `exc` says the other end of an output stream is gone."""
    if isinstance(exc, BrokenPipeError):
        return True
    if isinstance(exc, ValueError):
        return "closed file" in str(exc)
    return isinstance(exc, OSError) and exc.errno in _GONE


def silence(*streams: TextIO) -> None:
    """Point each stream's descriptor at /dev/null and drop what it still buffers."""
    for stream in streams:
        try:
            fd = stream.fileno()
        except (OSError, ValueError):
            continue  # not backed by a descriptor (a test's StringIO) or already closed
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        with contextlib.suppress(OSError, ValueError):
            stream.flush()  # what was buffered for the gone reader now goes to /dev/null


def say(stream: TextIO, text: str) -> bool:
    """Write one diagnostic line; False (and nothing raised) if the stream is gone."""
    try:
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()
    except (OSError, ValueError) as e:
        if not is_closed_stream(e):
            raise
        return False
    return True
