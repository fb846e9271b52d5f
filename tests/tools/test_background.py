"""Background shells: Bash(run_in_background) → TaskOutput (new output only) → TaskStop."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from aistack_tui.tools.background import BackgroundShell, BackgroundShells, shells_of
from aistack_tui.tools.base import ToolContext, ToolError, ToolOutput
from aistack_tui.tools.bash import BashTool
from aistack_tui.tools.task_output import TaskOutputTool, TaskStopTool
from tests.tools.test_bash import alive, wait_for_file, wait_gone


async def call(tool: BashTool | TaskOutputTool | TaskStopTool, ctx: ToolContext,
               **raw: object) -> ToolOutput:
    return await tool.run(tool.parse_args(raw), ctx)  # type: ignore[arg-type]


def text_of(out: ToolOutput) -> str:
    assert isinstance(out.content, str)
    return out.content


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return any(alive(int(p)) for p in os.listdir("/proc") if p.isdigit()
               and _pgid(int(p)) == pgid)


def _pgid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])
    except (FileNotFoundError, IndexError, ValueError):
        return -1


SERVER = (
    # A stand-in dev server: says it is ready, waits for a request, logs it, keeps running.
    "echo $$ > pid; echo 'listening on :8000'; echo 'API_KEY=sk-ant-abcdefghijklmnopqrstuvwx'; "
    "while [ ! -e request ]; do sleep 0.05; done; echo 'GET / 200'; echo 'GET /x 404'; "
    "sleep 300"
)


async def test_server_read_twice_then_stopped(ctx: ToolContext, project: Path) -> None:
    started = await call(BashTool(), ctx, command=SERVER, run_in_background=True)
    assert "bash_1" in text_of(started)
    shell = shells_of(ctx).get("bash_1")
    await wait_for_file(project / "pid")
    await printed(shell, b"API_KEY")

    first = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", block=False))
    assert "<status>running</status>" in first
    assert "listening on :8000" in first
    assert "sk-ant-abcdefghijklmnopqrstuvwx" not in first  # masked like Bash output

    (project / "request").touch()
    await printed(shell, b"404\n")
    second = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", block=False,
                                filter="404"))
    assert "GET /x 404" in second
    assert "listening" not in second and "GET / 200" not in second  # only new, filtered

    third = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", block=False))
    assert "(no new output)" in third

    pgid = shell.proc.pid
    stopped = text_of(await call(TaskStopTool(), ctx, task_id="bash_1"))
    assert "Stopped bash_1" in stopped
    assert await _gone(pgid)
    after = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", block=False))
    assert "<status>killed</status>" in after


async def printed(shell: BackgroundShell, marker: bytes, seconds: float = 10) -> None:
    """Wait until the unread output holds `marker` (without reading it)."""
    for _ in range(int(seconds * 50)):
        if marker in bytes(shell.window.head) + bytes(shell.window.tail):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{marker!r} never printed")


async def _gone(pgid: int, seconds: float = 5) -> bool:
    for _ in range(int(seconds * 50)):
        if not group_alive(pgid):
            return True
        await asyncio.sleep(0.02)
    return False


async def test_returns_at_once_and_blocking_read_waits_for_exit(ctx: ToolContext) -> None:
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await call(BashTool(), ctx, command="sleep 0.5; echo done; exit 3", run_in_background=True)
    assert loop.time() - t0 < 0.4
    out = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", timeout=5000))
    assert "<status>failed (exit 3)</status>" in out and "done" in out


async def test_children_left_behind_end_with_the_shell(ctx: ToolContext,
                                                        project: Path) -> None:
    """A command that leaves a process running when its shell exits takes it along."""
    await call(BashTool(), ctx, command="sleep 300 & echo $! > child; sleep 0.2",
               run_in_background=True)
    child = int(await wait_for_file(project / "child"))
    await call(TaskOutputTool(), ctx, task_id="bash_1", timeout=5000)
    assert await wait_gone(child)


async def test_session_close_ends_every_shell(ctx: ToolContext, project: Path) -> None:
    await call(BashTool(), ctx, command="sleep 300 & echo $! > a; wait", run_in_background=True)
    await call(BashTool(), ctx, command="echo $$ > b; sleep 300", run_in_background=True)
    pids = [int(await wait_for_file(project / name)) for name in ("a", "b")]
    shells: BackgroundShells = shells_of(ctx)
    assert len(shells.running()) == 2
    await shells.aclose()
    for pid in pids:
        assert await wait_gone(pid)


async def test_unknown_id_and_bad_filter_are_errors(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="No background shell"):
        await call(TaskOutputTool(), ctx, task_id="bash_9")
    await call(BashTool(), ctx, command="echo hi", run_in_background=True)
    with pytest.raises(ToolError, match="regular expression"):
        await call(TaskOutputTool(), ctx, task_id="bash_1", filter="(")
    out = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", timeout=5000))
    assert "hi" in out  # the failed call consumed nothing


async def test_stopped_by_the_deprecated_shell_id(ctx: ToolContext, project: Path) -> None:
    await call(BashTool(), ctx, command="echo $$ > p; sleep 300", run_in_background=True)
    pid = int(await wait_for_file(project / "p"))
    await call(TaskStopTool(), ctx, shell_id="bash_1")
    assert await wait_gone(pid)


async def test_a_line_split_across_reads_is_masked_whole(ctx: ToolContext,
                                                         project: Path) -> None:
    """A secret printed in two pieces is never handed out half (and so half-masked)."""
    await call(BashTool(), ctx, run_in_background=True, command=(
        "printf 'key: sk-ant-api03-'; while [ ! -e go ]; do sleep 0.05; done; "
        "printf 'abcdefghijklmnopqrstuvwxyz0123\\nnext\\n'; sleep 300"))
    shell = shells_of(ctx).get("bash_1")
    await printed(shell, b"api03-")
    first = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", block=False))
    assert "sk-ant" not in first and "(no new output)" in first
    (project / "go").touch()
    await printed(shell, b"next")
    second = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", block=False))
    assert "key:" in second and "next" in second
    assert "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123" not in second
    assert "abcdefghijklmnopqrstuvwxyz0123" not in second
    await call(TaskStopTool(), ctx, task_id="bash_1")


async def test_a_stalled_partial_line_is_shown_on_the_next_read(ctx: ToolContext) -> None:
    await call(BashTool(), ctx, run_in_background=True,
               command="printf 'Password: '; sleep 300")
    shell = shells_of(ctx).get("bash_1")
    await printed(shell, b"Password")
    assert "Password" not in text_of(
        await call(TaskOutputTool(), ctx, task_id="bash_1", block=False))
    again = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", block=False))
    assert "Password:" in again
    await call(TaskStopTool(), ctx, task_id="bash_1")


async def test_output_is_capped_like_bash(ctx: ToolContext) -> None:
    await call(BashTool(), ctx, run_in_background=True,
               command="for i in $(seq 1 20000); do echo line $i; done")
    out = text_of(await call(TaskOutputTool(), ctx, task_id="bash_1", timeout=10000))
    assert "completed (exit 0)" in out
    assert "line 1\n" in out and "line 20000" in out
    assert "bytes of output omitted" in out and len(out) < 30_000


async def test_a_shell_cancelled_while_starting_leaves_nothing_running(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn can be interrupted while a background shell is still starting (the child
    runs before asyncio has connected its pipes). What the shell started must die with the
    cancel, and its pipes must not leak: an open lifeline kept its watcher waiting until
    aistack exited, with the shell in no `/bashes` list."""
    from tests.sandbox.test_kill_tree import kill_all, left_over, setsid_child_started

    marker = f"sleep 32.{os.getpid()}7"
    spawn = asyncio.create_subprocess_exec
    started: list[asyncio.subprocess.Process] = []
    release = asyncio.Event()

    async def slow_spawn(*args: object, **kwargs: object) -> asyncio.subprocess.Process:
        proc = await spawn(*args, **kwargs)  # type: ignore[arg-type]
        started.append(proc)
        await release.wait()  # as asyncio's own start is still connecting pipes
        return proc

    shells = BackgroundShells()
    fds_before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(asyncio, "create_subprocess_exec", slow_spawn)
    task = asyncio.ensure_future(shells.start(
        f"setsid {marker} & wait", cwd=project, env=dict(os.environ), wrap=None))
    try:
        await setsid_child_started(started, marker.encode())
        task.cancel()
        await asyncio.sleep(0.05)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        monkeypatch.undo()
        assert await left_over(marker.encode()) == [], "the setsid child outlived the cancel"
        assert started[0].returncode is not None
        assert shells.running() == []
        assert set(os.listdir("/proc/self/fd")) <= fds_before, "a pipe end leaked"
    finally:
        kill_all(marker.encode())
