"""kill_group takes down the whole tree: a bwrap sandbox still setting up, a setsid child.

bwrap's sandbox child calls setsid (`--new-session`) and arms its parent-death signal
only after it is cloned; a kill of the process group in that window left the sandbox
running its command to the end. These kill at the earliest moments, many times over.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

from aistack_tui.tools.process import kill_by_command_line, kill_group, kill_tree, start_group
from tests.sandbox.test_sandbox import confined, needs_bwrap

DELAYS = (0.0, 0.0005, 0.001, 0.002, 0.005)


def holding(marker: bytes) -> list[int]:
    """Pids of live processes whose command line holds `marker` (zombies have none), as
    whole arguments: the markers carry this run's pid, so a run in parallel is left be."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            line = b" " + Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
            if b" " + marker + b" " in line:
                pids.append(int(name))
    return pids


async def left_over(marker: bytes) -> list[int]:
    """What still holds `marker` after a moment to die in (a SIGKILL is not instant);
    a survivor runs for half a minute, so it is still there."""
    deadline = time.monotonic() + 0.5
    while (pids := holding(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return pids


def kill_all(marker: bytes) -> None:
    """Leave nothing behind, even when the test fails (SIGKILL reaches a namespace init)."""
    for pid in holding(marker):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


@needs_bwrap
async def test_a_sandbox_killed_while_it_sets_up_leaves_nothing(tmp_path: Path) -> None:
    project, scratch = tmp_path / "project", tmp_path / "scratch"
    project.mkdir()
    scratch.mkdir()
    marker = f"sleep 31.{os.getpid()}7".encode()
    sandbox = confined(project, scratch)  # kept: its scratch dir goes when it does
    argv = sandbox.wrap_command(["sh", "-c", marker.decode()], cwd=project)

    async def start() -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=project, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )

    try:
        # First the command is seen running inside the sandbox: the argv really works.
        proc = await start()
        deadline = time.monotonic() + 3
        while len(holding(marker)) < 2:  # bwrap, and the sandbox's own processes
            assert proc.returncode is None, "the sandboxed command did not start"
            assert time.monotonic() < deadline, "the sandboxed command did not start"
            await asyncio.sleep(0.005)
        await kill_group(proc, grace=0.5)
        assert await left_over(marker) == []
        for round_ in range(30):
            proc = await start()
            time.sleep(DELAYS[round_ % len(DELAYS)])  # blocking on purpose: an exact delay
            await kill_group(proc, grace=0.5)
            assert proc.returncode is not None
        assert await left_over(marker) == [], "a sandbox outlived kill_group"
    finally:
        kill_all(marker)


async def test_a_child_that_left_the_group_is_killed_too() -> None:
    marker = f"sleep 31.{os.getpid()}8".encode()
    proc = await asyncio.create_subprocess_exec(
        "sh", "-c", f"setsid {marker.decode()} & wait", stdin=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 3
        while not any(os.getsid(pid) == pid for pid in holding(marker)
                      if pid != proc.pid and _in_tree(pid, proc.pid)):
            assert time.monotonic() < deadline, "setsid sleep never started"
            await asyncio.sleep(0.005)
        await kill_group(proc, grace=0.5)
        assert await left_over(marker) == []
    finally:
        kill_all(marker)


def _in_tree(pid: int, root: int) -> bool:
    """Whether `pid` is `root`'s child (a sleep of another run is not ours)."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat[stat.rfind(b")") + 2 :].split()[1]) == root
    return False


async def test_kill_tree_reaches_past_the_group_after_its_leader_exited() -> None:
    """A background shell's command ended; a subshell it left in the group still has a
    setsid child (what background shells and hooks clean up with kill_tree)."""
    marker = f"sleep 31.{os.getpid()}9".encode()
    proc = await asyncio.create_subprocess_exec(
        "sh", "-c", f"(setsid {marker.decode()} & wait) & exit 0",
        stdin=asyncio.subprocess.DEVNULL, start_new_session=True,
    )
    try:
        assert await proc.wait() == 0
        deadline = time.monotonic() + 3
        while not any(os.getsid(pid) == pid for pid in holding(marker)):
            assert time.monotonic() < deadline, "setsid sleep never started"
            await asyncio.sleep(0.005)
        kill_tree(proc.pid)
        assert await left_over(marker) == []
    finally:
        kill_all(marker)


@needs_bwrap
async def test_a_sandbox_an_editor_killed_during_set_up_is_found_by_its_command_line(
        tmp_path: Path) -> None:
    """An editor's terminal kills bwrap's process group and nothing else; aistack then
    kills what still runs the command line it gave the terminal (the ACP path)."""
    project, scratch = tmp_path / "project", tmp_path / "scratch"
    project.mkdir()
    scratch.mkdir()
    marker = f"sleep 31.{os.getpid()}6".encode()
    sandbox = confined(project, scratch)
    argv = sandbox.wrap_command(["sh", "-c", marker.decode()], cwd=project)
    survived = 0
    try:
        for round_ in range(40):
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=project, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True)
            time.sleep(DELAYS[round_ % len(DELAYS)])
            os.killpg(proc.pid, signal.SIGKILL)  # what the editor's terminal does
            await proc.wait()
            survived += bool(holding(marker))
            kill_by_command_line(argv)
        assert await left_over(marker) == []
    finally:
        kill_all(marker)
    print(f"sandboxes that outlived the editor's kill: {survived} of 40")


async def setsid_child_started(started: list[asyncio.subprocess.Process],
                               marker: bytes) -> None:
    """Wait until a start held open has run its shell, and the shell its setsid child."""
    deadline = time.monotonic() + 3
    while not (started and any(os.getsid(pid) == pid for pid in holding(marker))):
        assert time.monotonic() < deadline, "setsid sleep never started"
        await asyncio.sleep(0.005)


async def test_a_cancel_while_the_command_is_still_starting_kills_what_it_started() -> None:
    """The child runs before asyncio has connected its pipes; a cancel in between used to
    kill the shell's pid alone (asyncio's clean-up), and its setsid child ran on. Here
    the start is held open until the setsid child runs, then cancelled."""
    marker = f"sleep 31.{os.getpid()}6".encode()
    started: list[asyncio.subprocess.Process] = []
    release = asyncio.Event()

    async def slow_start() -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", f"setsid {marker.decode()} & wait", stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        started.append(proc)
        await release.wait()  # as asyncio's own start is still connecting pipes
        return proc

    task = asyncio.ensure_future(start_group(slow_start(), grace=0.5))
    try:
        await setsid_child_started(started, marker)
        task.cancel()
        await asyncio.sleep(0.05)
        release.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert task.cancelled()
        assert await left_over(marker) == [], "the setsid child outlived the cancel"
        assert started[0].returncode is not None
    finally:
        kill_all(marker)


async def test_an_uncancelled_start_is_the_process_itself() -> None:
    proc = await start_group(asyncio.create_subprocess_exec(
        "sh", "-c", "exit 7", stdin=asyncio.subprocess.DEVNULL, start_new_session=True))
    assert await proc.wait() == 7
