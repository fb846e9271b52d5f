"""The child processes this process leaves behind, and ending them.

Every child aistack starts (Bash commands, hooks, MCP servers) leads its own process
group, so signalling the group also reaches what the child started. This is the last
line of defence at exit, after each owner has had its chance to stop its own children:
an MCP server that ignores SIGTERM and its closed stdin, say, would otherwise hold the
SDK's shutdown for seconds and outlive us.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from aistack_tui.shutdown.proc_table import proc_table

_PROC = Path("/proc")
_POLL_S = 0.02


def child_pids(parent: int | None = None) -> list[int]:
    """The live (not zombie) direct children of `parent` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    if _PROC.is_dir():
        return [pid for pid, st in proc_table().items() if st.ppid == parent and st.state != "Z"]
    try:  # macOS and the BSDs: no /proc
        listing = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,stat="], capture_output=True,
                                 text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found: list[int] = []
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and int(fields[1]) == parent and not fields[2].startswith("Z"):
            found.append(int(fields[0]))
    return found


def end_children(grace: float) -> list[int]:
    """SIGTERM each child's group, SIGKILL what is left after `grace` seconds; returns
    the children found. A child in our own group is signalled alone: its group is ours."""
    children = child_pids()
    if not children:
        return []
    own_group = os.getpgrp()
    # Groups are noted before anything dies: a leader gone, its group is still there.
    targets = [(pid, _own_group_of(pid, own_group)) for pid in children]
    for pid, group in targets:
        _signal(pid, group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and set(children) & set(child_pids()):
        time.sleep(_POLL_S)
    for pid, group in targets:  # the group too: grandchildren may ignore SIGTERM
        _signal(pid, group, signal.SIGKILL)
    return children


def _own_group_of(pid: int, own_group: int) -> int | None:
    """The group `pid` leads, if it leads one apart from ours."""
    try:
        group = os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None
    return group if group == pid and group != own_group else None


def _signal(pid: int, group: int | None, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group is not None:
            os.killpg(group, signum)
        else:
            os.kill(pid, signum)
