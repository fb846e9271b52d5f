"""Watching an aistack process end: how long it took, what it printed, what it left.

Every process aistack starts inherits a marker variable (the MCP servers get it through
their config's `env`), so after the exit a scan of /proc finds whatever outlived it,
however deep or re-parented.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.helpers import AISTACK

MARK_VAR = "AISTACK_TEST_EXIT_MARK"
FAKES = Path(__file__).resolve().parents[2] / "fakes"
EXIT_WITHIN = 5.0
"""From what ends a run (a signal, a closed pipe) to the process gone (the issue's bound)."""
START_WITHIN = 30.0
"""For an exit timed from the start: start-up on a loaded 2-core machine takes seconds;
what such a test catches is a process that never exits."""


@dataclass
class Watched:
    proc: subprocess.Popen[bytes]
    mark: str
    started: float = field(default_factory=time.monotonic)

    def signal(self, signum: int) -> float:
        """Send `signum` to aistack alone (`kill PID`); the moment it was sent."""
        self.proc.send_signal(signum)
        return time.monotonic()


def new_mark() -> str:
    return uuid.uuid4().hex


def start(args: list[str], *, cwd: Path, env: dict[str, str],
          stdin: int = subprocess.DEVNULL, mark: str | None = None) -> Watched:
    mark = mark or new_mark()
    proc = subprocess.Popen(
        [*AISTACK, *args], cwd=cwd, env={**os.environ, **env, MARK_VAR: mark},
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    return Watched(proc, mark)


def marked(mark: str) -> list[tuple[int, list[str]]]:
    """(pid, argv) of every live process carrying the marker."""
    needle = f"{MARK_VAR}={mark}".encode()
    found: list[tuple[int, list[str]]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            if stat[stat.rfind(")") + 2] == "Z":
                continue
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            found.append((int(entry.name), argv[:-1]))
        except OSError:
            continue
    return found


def wait_for(condition: Any, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class Ended:
    status: int
    seconds: float
    """From `since` (the signal, the close) to the exit."""
    stdout: str
    stderr: str


def ended(watched: Watched, since: float | None = None, within: float = EXIT_WITHIN,
          read_stdout: bool = True) -> Ended:
    """Wait (bounded) for the exit; asserts it came in time, with no traceback and no
    process left behind."""
    proc = watched.proc
    begin = since if since is not None else watched.started
    if proc.stdin is not None and proc.stdin.closed:
        proc.stdin = None  # communicate() would flush it
    try:
        out, err = proc.communicate(timeout=within + 10) if read_stdout else (
            b"", proc.stderr.read() if proc.stderr else b"")
        proc.wait(timeout=within + 10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        for pid, _argv in marked(watched.mark):
            os.kill(pid, signal.SIGKILL)
        raise AssertionError("aistack did not exit") from None
    seconds = time.monotonic() - begin
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    left = _left_after(watched.mark)
    assert seconds < within, f"exit took {seconds:.1f} s\n{stderr}"
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert left == [], f"left running: {left}\n{stderr}"
    return Ended(proc.returncode, seconds, stdout, stderr)


def _left_after(mark: str) -> list[tuple[int, list[str]]]:
    """What still runs a moment after the exit (a SIGKILL takes a moment to land)."""
    deadline = time.monotonic() + 0.5
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid, _argv in left:  # never leak into the rest of the suite
        os.kill(pid, signal.SIGKILL)
    return left


def stored_roles(home: Path) -> list[str]:
    """The roles of the most recent session's stored messages, in order."""
    db = sqlite3.connect(home / "aistack.db")
    try:
        row = db.execute("SELECT session_id FROM session_messages ORDER BY rowid DESC "
                         "LIMIT 1").fetchone()
        if row is None:
            return []
        return [r[0] for r in db.execute(
            "SELECT role FROM session_messages WHERE session_id = ? ORDER BY seq", row)]
    finally:
        db.close()


def stubborn_mcp(directory: Path, mark: str, fake: str = "mcp_stubborn.py") -> Path:
    """An --mcp-config file naming a server that ignores SIGTERM and its closed stdin
    (`mcp_silent.py`: one that never answers the handshake either)."""
    path = directory / "stubborn-mcp.json"
    path.write_text(json.dumps({"mcpServers": {"stubborn": {
        "command": sys.executable, "args": [str(FAKES / fake)], "env": {MARK_VAR: mark}}}}))
    return path


def running(mark: str, program: str) -> bool:
    """Whether a marked process runs `program` (its argv[0])."""
    return any(argv and Path(argv[0]).name == program for _pid, argv in marked(mark))


def running_script(mark: str, script: str) -> bool:
    """Whether a marked process runs a Python script named `script`."""
    return any(len(argv) > 1 and Path(argv[1]).name == script for _pid, argv in marked(mark))
