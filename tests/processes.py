"""Finding the processes a test started, by their exact command line, through /proc."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def running(command: str) -> list[int]:
    """Pids of live processes whose command line is exactly `command`, split on spaces
    (a marker such as `sleep 41.<test pid>` names one test's processes only)."""
    wanted = command.replace(" ", "\0").encode() + b"\0"
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{name}/cmdline").read_bytes() == wanted:
                    pids.append(int(name))
    return pids
