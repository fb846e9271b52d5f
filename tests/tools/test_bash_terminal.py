"""Bash in an editor's terminal (`tools/bash_terminal.py`), with terminals that really run
the argv they get: the editor's own variables never reach the command, the working
directory is kept, and a terminal that cannot run the command means it runs here, once."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from aistack_tui.tools.base import ToolContext, ToolOutput
from aistack_tui.tools.bash import BashTool


class Run:
    """One terminal: output collected as it comes, the process group killed on kill."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.terminal_id = f"t{proc.pid}"
        self.released = False
        self.killed = False
        self.captured = bytearray()
        self.reader = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.captured += chunk

    async def wait_for_exit(self) -> tuple[int | None, str | None]:
        code = await self.proc.wait()
        await asyncio.wait_for(self.reader, 5)
        return code, None

    async def output(self) -> tuple[str, bool]:
        return self.captured.decode(), False

    async def kill(self) -> None:
        self.killed = True
        os.killpg(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()
        await asyncio.wait_for(self.reader, 5)

    async def release(self) -> None:
        self.released = True


class Terminal:
    """An editor's terminal: its own environment merged in, the argv run as given.
    `remote`: like an editor on another machine, where aistack's temp files do not exist."""

    def __init__(self, *, remote: bool = False, refuse: bool = False) -> None:
        self.remote = remote
        self.refuse = refuse
        self.argvs: list[list[str]] = []
        self.runs: list[Run] = []

    async def create(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                     output_byte_limit: int, tool_use_id: str) -> Run:
        if self.refuse:
            raise RuntimeError("terminal/create: not allowed")
        self.argvs.append(list(argv))
        if self.remote:
            for arg in argv:
                for word in arg.split():
                    if "aistack-env-" in word:
                        Path(word.strip("'")).unlink(missing_ok=True)
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env={**os.environ, **env, "EDITOR_ONLY": "from-the-editor"},
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        run = Run(proc)
        self.runs.append(run)
        return run


async def bash(ctx: ToolContext, command: str, **raw: object) -> ToolOutput:
    tool = BashTool()
    return await tool.run(tool.parse_args({"command": command, **raw}), ctx)


def text(out: ToolOutput) -> str:
    assert isinstance(out.content, str)
    return out.content


async def test_the_command_sees_the_tools_environment_not_the_editors(
        ctx: ToolContext, project: Path) -> None:
    terminal = Terminal()
    ctx.services.editor_terminal = terminal
    ctx.env = {"FROM_SETTINGS": "settings-value"}
    (project / "sub").mkdir()
    out = await bash(ctx, 'echo "[$EDITOR_ONLY] [$FROM_SETTINGS] [$GIT_PAGER]"; cd sub')
    assert text(out) == "[] [settings-value] [cat]"
    assert terminal.argvs[0][:2] == ["bash", "-c"]
    assert terminal.runs[0].released
    assert ctx.bash_cwd == project / "sub"  # the directory carries over, as here
    out = await bash(ctx, "pwd; exit 3")
    assert text(out).splitlines()[0] == str(project / "sub")
    assert out.metadata["exit_code"] == 3


async def test_a_terminal_that_cannot_run_it_means_it_runs_here_once(
        ctx: ToolContext, project: Path) -> None:
    remote = Terminal(remote=True)
    ctx.services.editor_terminal = remote
    out = await bash(ctx, "echo ran >> count.txt; echo done")
    assert text(out) == "done"
    assert len(remote.argvs) == 1
    assert (project / "count.txt").read_text() == "ran\n"  # not twice

    ctx.services.editor_terminal = Terminal(refuse=True)
    out = await bash(ctx, "echo here")
    assert text(out) == "here"


async def test_a_command_past_its_timeout_is_killed_in_the_terminal(ctx: ToolContext) -> None:
    terminal = Terminal()
    ctx.services.editor_terminal = terminal
    out = await bash(ctx, "echo started; sleep 20", timeout=500)
    assert out.is_error
    assert text(out).startswith("started\n\nCommand timed out after 0.5 s")
    [run] = terminal.runs
    assert run.killed and run.released
    assert run.proc.returncode is not None
