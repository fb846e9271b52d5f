"""Background shells: `Bash(run_in_background=true)`, read with TaskOutput, ended by TaskStop.

A dev server or a watcher must keep running while the conversation goes on, and must
never outlive the session, not even when aistack itself is killed with SIGKILL (no
`finally` runs then). Each shell runs in its own process group, and holds a *lifeline*:
its stdin is a pipe whose only write end stays in aistack. The script starts with a
watcher subshell, in the same group, that blocks reading that pipe; when aistack closes
the pipe (the shell is stopped, the session ends) or the kernel closes it (aistack died),
the read returns and the watcher kills its whole group. PR_SET_PDEATHSIG would reach only
the direct child and is not inherited by what it forks; the lifeline reaches every
process of the group, on any Unix, and under bubblewrap too (which also gets
`--die-with-parent` from the sandbox, and ends its pid namespace with it). Commands read
stdin from /dev/null, as in the foreground.

Output goes into an unread window with the Bash tool's head-and-tail budget, so a chatty
server never grows memory; each read takes the window and starts a new one. Only whole
lines are handed out while the shell runs (a secret split across two reads would not be
masked), except a partial line that has not grown since the previous read (a prompt).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from aistack_tui.tools.base import ToolContext, ToolError
from aistack_tui.tools.process import Captured, kill_group, kill_tree, start_group

HEAD_BYTES = 16_000
TAIL_BYTES = 12_000

WATCHER = (
    # fd 3 keeps the lifeline for the watcher; everything else reads /dev/null.
    "exec 3<&0 </dev/null\n"
    "( read -r -u 3 _; kill -KILL 0 ) >/dev/null 2>&1 &\n"
    "exec 3<&-\n"
)
"""The prelude of every background script: the watcher described in the module doc."""

Status = Literal["running", "completed", "failed", "killed"]


@dataclass(eq=False)
class BackgroundShell:
    """One background command and what it printed since the last read."""

    id: str
    command: str
    description: str
    cwd: Path
    proc: asyncio.subprocess.Process
    lifeline: int
    """The write end of the lifeline pipe (-1 once closed)."""
    started: float = field(default_factory=time.time)
    status: Status = "running"
    exit_code: int | None = None
    notes: list[str] = field(default_factory=list[str])
    window: Captured = field(default_factory=lambda: Captured.with_budget(HEAD_BYTES, TAIL_BYTES))
    held: bytes = b""
    """The partial last line kept back at the previous read."""
    done: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[None]] = field(default_factory=list[asyncio.Task[None]])

    @property
    def running(self) -> bool:
        return self.status == "running"

    def state(self) -> str:
        """`running`, `completed (exit 0)`, `failed (exit 2)` or `killed`."""
        if self.status in ("completed", "failed"):
            return f"{self.status} (exit {self.exit_code})"
        return self.status

    def take(self, final: bool) -> tuple[str, int]:
        """The unread output as raw text and the bytes it dropped; a partial last line
        stays for the next read unless `final` or unchanged since the last read."""
        window = self.window
        dropped = window.dropped
        buffer = window.tail if window.tail else window.head
        cut = buffer.rfind(b"\n") + 1
        rest = bytes(buffer[cut:])
        if not final and rest and rest != self.held:
            del buffer[cut:]
            window.total -= len(rest)
        else:
            rest = b""
        self.held = rest
        text = window.text()
        self.window = Captured.with_budget(HEAD_BYTES, TAIL_BYTES)
        if rest:
            self.window.add(rest)
        return text, dropped


class BackgroundShells:
    """The background shells of one session (`ctx.services.background`)."""

    def __init__(self) -> None:
        self.shells: dict[str, BackgroundShell] = {}
        self._next = 1
        self.on_change: Callable[[], None] | None = None
        """Called when a shell starts or ends (the TUI's status line listens)."""

    def running(self) -> list[BackgroundShell]:
        return [s for s in self.shells.values() if s.running]

    def get(self, shell_id: str) -> BackgroundShell:
        shell = self.shells.get(shell_id.strip())
        if shell is None:
            known = ", ".join(self.shells) or "none"
            raise ToolError(f"No background shell {shell_id!r} (known: {known}).")
        return shell

    async def start(
        self,
        command: str,
        *,
        cwd: Path,
        env: dict[str, str],
        wrap: Callable[[list[str], list[Path]], list[str]] | None,
        description: str = "",
        on_exit: Callable[[], list[str]] | None = None,
    ) -> BackgroundShell:
        """Start `command` in its own process group with a lifeline; returns at once."""
        argv = ["bash", "-c", WATCHER + command]
        if wrap is not None:
            argv = wrap(argv, [])
        out_read, out_write = os.pipe()
        life_read, life_write = os.pipe()  # both close-on-exec: no other child holds them
        try:
            # Cancelled while still starting (the turn interrupted), what the shell
            # started is killed, and closing the lifeline stops the watcher too.
            proc = await start_group(asyncio.create_subprocess_exec(
                *argv, stdin=life_read, stdout=out_write, stderr=out_write, cwd=cwd,
                env=env, start_new_session=True,
            ))
        except BaseException as e:
            for fd in (out_read, life_write):
                os.close(fd)
            if isinstance(e, OSError):
                raise ToolError(f"Cannot start {argv[0]}: {e.strerror or e}") from e
            raise
        finally:
            os.close(out_write)
            os.close(life_read)
        shell_id = f"bash_{self._next}"
        self._next += 1
        shell = BackgroundShell(shell_id, command, description, cwd, proc, life_write)
        self.shells[shell_id] = shell
        shell.tasks.append(asyncio.ensure_future(_read(shell, out_read)))
        shell.tasks.append(asyncio.ensure_future(self._wait(shell, on_exit)))
        self._changed()
        return shell

    async def _wait(self, shell: BackgroundShell,
                    on_exit: Callable[[], list[str]] | None) -> None:
        code = await shell.proc.wait()
        # What the command left running in its group goes with it: nothing untracked stays.
        _cut_lifeline(shell)
        kill_tree(shell.proc.pid)
        if shell.status == "running":
            shell.exit_code = code
            shell.status = "completed" if code == 0 else "failed"
        if on_exit is not None:
            with contextlib.suppress(Exception):
                shell.notes += on_exit()
        shell.done.set()
        self._changed()

    async def stop(self, shell: BackgroundShell) -> None:
        """SIGTERM the group, SIGKILL what is left, and cut the lifeline."""
        if shell.running:
            shell.status = "killed"
            _cut_lifeline(shell)
            await kill_group(shell.proc, grace=1.0)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(shell.done.wait(), 2)

    async def aclose(self) -> None:
        """End every shell (the session is closing)."""
        await asyncio.gather(*(self.stop(s) for s in self.running()),
                             return_exceptions=True)
        for shell in self.shells.values():
            _cut_lifeline(shell)
            for task in shell.tasks:
                task.cancel()

    def _changed(self) -> None:
        if self.on_change is not None:
            with contextlib.suppress(Exception):
                self.on_change()


def shells_of(ctx: ToolContext) -> BackgroundShells:
    """The session's background shells, made on first use."""
    shells = ctx.services.background
    if not isinstance(shells, BackgroundShells):
        shells = ctx.services.background = BackgroundShells()
    return shells


def filter_lines(text: str, pattern: str | None) -> str:
    """The lines of `text` matching the regex `pattern` (all of them without one)."""
    if not pattern:
        return text
    try:
        regex = re.compile(pattern)
    except re.error as e:
        raise ToolError(f"filter is not a valid regular expression: {e}") from e
    return "\n".join(line for line in text.split("\n") if regex.search(line))


def _cut_lifeline(shell: BackgroundShell) -> None:
    if shell.lifeline >= 0:
        with contextlib.suppress(OSError):
            os.close(shell.lifeline)
        shell.lifeline = -1


async def _read(shell: BackgroundShell, fd: int) -> None:
    """Move the shell's output into its window until every writer has closed the pipe."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), pipe
    )
    try:
        while chunk := await reader.read(65536):
            shell.window.add(chunk)
    finally:
        transport.close()
