from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from aistack_tui.tools.base import ToolContext, ToolError, ToolOutput
from aistack_tui.tools.bash import BashTool


async def bash(ctx: ToolContext, command: str, **raw: object) -> ToolOutput:
    tool = BashTool()
    return await tool.run(tool.parse_args({"command": command, **raw}), ctx)


def text_of(out: ToolOutput) -> str:
    assert isinstance(out.content, str)
    return out.content


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_for_file(path: Path, seconds: float = 5) -> str:
    for _ in range(int(seconds * 50)):
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def wait_gone(pid: int, seconds: float = 5) -> bool:
    for _ in range(int(seconds * 50)):
        if not alive(pid):
            return True
        await asyncio.sleep(0.02)
    return False


async def test_runs_a_command_and_reports_output(ctx: ToolContext, project: Path) -> None:
    out = await bash(ctx, "echo hello; echo oops >&2")
    assert text_of(out) == "hello\noops"
    assert out.is_error is False
    assert out.metadata["exit_code"] == 0


async def test_nonzero_exit_is_stated_not_an_error(ctx: ToolContext) -> None:
    out = await bash(ctx, "echo partial; exit 3")
    assert out.is_error is False
    assert text_of(out) == "partial\n\nExit code: 3"


async def test_no_output_is_said(ctx: ToolContext) -> None:
    assert text_of(await bash(ctx, "true")) == "(no output)"


async def test_working_directory_persists(ctx: ToolContext, project: Path) -> None:
    (project / "sub dir").mkdir()
    await bash(ctx, "cd 'sub dir'")
    assert ctx.bash_cwd == project / "sub dir"
    assert text_of(await bash(ctx, "pwd")) == str(project / "sub dir")
    # the cwd is captured even when the command exits with an error
    out = await bash(ctx, "cd .. && exit 4")
    assert out.metadata["exit_code"] == 4
    assert ctx.bash_cwd == project


async def test_deleted_cwd_falls_back_to_project(ctx: ToolContext, project: Path) -> None:
    gone = project / "gone"
    gone.mkdir()
    ctx.bash_cwd = gone
    gone.rmdir()
    text = text_of(await bash(ctx, "pwd"))
    assert "no longer exists" in text
    assert text.endswith(str(project))


async def test_no_stdin_and_pager_env(ctx: ToolContext) -> None:
    assert text_of(await bash(ctx, "cat; echo $GIT_PAGER $PAGER")) == "cat cat"
    assert text_of(await bash(ctx, "test -t 1 && echo tty || echo notty")) == "notty"


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext, project: Path) -> None:
    pidfile = project / "child.pid"
    out = await bash(ctx, f"echo started; sleep 30 & echo $! > {pidfile}; wait", timeout=500)
    assert out.is_error is True
    text = text_of(out)
    assert "timed out after 0.5 s" in text
    assert text.startswith("started")  # partial output is kept
    child = int(pidfile.read_text())
    assert await wait_gone(child)


async def test_child_ignoring_sigterm_is_killed(ctx: ToolContext, project: Path) -> None:
    pidfile = project / "stubborn.pid"
    out = await bash(ctx, f"(trap '' TERM; sleep 30) & echo $! > {pidfile}; wait", timeout=300)
    assert out.is_error is True
    assert await wait_gone(int(pidfile.read_text()), seconds=6)


async def test_cancellation_kills_the_process_group(ctx: ToolContext, project: Path) -> None:
    pidfile = project / "c.pid"
    task = asyncio.create_task(bash(ctx, f"sleep 30 & echo $! > {pidfile}; wait"))
    child = int(await wait_for_file(pidfile))
    assert alive(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(child)


async def test_background_job_does_not_block_the_call(ctx: ToolContext, project: Path) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    out = await bash(ctx, "sleep 5 > /dev/null 2>&1 & echo launched")
    assert text_of(out) == "launched"
    start2 = loop.time()
    out = await bash(ctx, "sleep 3 & echo held")  # holds our pipe: we stop reading on exit
    assert text_of(out) == "held"
    assert loop.time() - start2 < 2.5
    assert loop.time() - start < 4


async def test_long_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    text = text_of(await bash(ctx, "seq 1 100000"))
    assert text.startswith("1\n2\n3\n")
    assert text.rstrip().endswith("99999\n100000")
    assert "bytes of output omitted" in text
    assert len(text) < 32_000


async def test_secrets_in_output_are_masked(ctx: ToolContext) -> None:
    key = "sk-ant-api03-" + "Z" * 40
    text = text_of(await bash(ctx, f"echo ANTHROPIC_API_KEY={key}"))
    assert key not in text
    assert "[REDACTED]" in text


async def test_timeout_over_maximum_is_rejected() -> None:
    with pytest.raises(ToolError, match="timeout"):
        BashTool().parse_args({"command": "true", "timeout": 600_001})


async def test_syntax_error_reports_exit_code(ctx: ToolContext) -> None:
    text = text_of(await bash(ctx, "if then"))
    assert "syntax error" in text
    assert "Exit code: 2" in text


def test_describe_shows_the_command() -> None:
    tool = BashTool()
    display = tool.describe(tool.parse_args({"command": "pytest -q\necho done"}))
    assert display.summary == "Bash pytest -q …"
    assert os.sep not in display.language


async def test_colour_codes_and_progress_redraws_are_cleaned(ctx: ToolContext) -> None:
    out = await bash(ctx, r"printf '\033[31mred\033[0m\n10%%\r50%%\r100%%\ndone\r\n'")
    assert text_of(out) == "red\n100%\ndone"
