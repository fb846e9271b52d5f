"""The processes this machine shows, read from /proc (Linux): for finding a process's
children and a command's whole tree, where a process group is not enough."""

from __future__ import annotations

import os
from typing import NamedTuple


class ProcStat(NamedTuple):
    """What is read of a process in /proc/<pid>/stat."""

    state: str
    ppid: int
    pgrp: int
    start: int  # clock ticks after boot: with the pid, names one process for good


def proc_stat(pid: int) -> ProcStat | None:
    """`pid`'s /proc/<pid>/stat; None if it is gone (or there is no /proc).

    The command name (field 2) may hold spaces and ')', so fields are split after the
    last ')': there the state is field 3, the parent 4, the group 5, the start time 22.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return ProcStat(fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19]))
    except (IndexError, ValueError):
        return None


def pids() -> list[int]:
    """The pid of every process this namespace shows (none without `/proc`)."""
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def proc_table() -> dict[int, ProcStat]:
    """Every process this namespace shows, by pid."""
    return {pid: st for pid in pids() if (st := proc_stat(pid)) is not None}
