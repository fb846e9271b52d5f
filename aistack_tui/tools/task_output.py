"""TaskOutput and TaskStop: read and stop the shells `Bash(run_in_background)` started.

Names and inputs are Claude Code's current ones (`TaskOutput {task_id, block, timeout}`,
`TaskStop {task_id, shell_id}`; formerly `BashOutput {bash_id, filter}` and
`KillShell {shell_id}`); TaskOutput keeps BashOutput's regex `filter`. Neither needs a
permission: they act only on processes the session already started with one. A read
returns only what arrived since the previous read, cleaned and with secrets masked like
Bash output.
"""

from __future__ import annotations

import asyncio
import contextlib

from pydantic import Field

from aistack_tui.permissions.secrets import mask_secrets
from aistack_tui.tools.background import BackgroundShell, filter_lines, shells_of
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.bash import clean_output
from aistack_tui.tools.schema import CompactSpec

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000


class TaskOutputArgs(ToolArgs):
    task_id: str = Field(description="The background shell's id, from Bash")
    block: bool = True
    timeout: int = Field(default=DEFAULT_WAIT_MS, ge=0, le=MAX_WAIT_MS)
    filter: str | None = None


class TaskStopArgs(ToolArgs):
    task_id: str | None = None
    shell_id: str | None = Field(default=None, description="Deprecated: use task_id")


def _header(shell: BackgroundShell) -> str:
    return f"<task_id>{shell.id}</task_id>\n<status>{shell.state()}</status>"


class TaskOutputTool(CompactSpec, Tool[TaskOutputArgs]):
    name = "TaskOutput"
    args_model = TaskOutputArgs
    read_only = True
    needs_permission = False

    def path_argument(self, args: TaskOutputArgs) -> str | None:
        return None

    def describe(self, args: TaskOutputArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"TaskOutput {args.task_id}")

    async def run(self, args: TaskOutputArgs, ctx: ToolContext) -> ToolOutput:
        shell = shells_of(ctx).get(args.task_id)
        filter_lines("", args.filter)  # a bad regex fails before anything is consumed
        if args.block and shell.running:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(shell.done.wait(), args.timeout / 1000)
        if not shell.running:
            # The reader may still be taking the last bytes from the pipe.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(shell.tasks[0]), 1)
        raw, dropped = shell.take(final=not shell.running)
        text = filter_lines(mask_secrets(clean_output(raw)).rstrip("\n"), args.filter)
        parts = [_header(shell), *shell.notes]
        shell.notes.clear()
        if dropped and args.filter:  # unfiltered, the output says where it was cut
            parts.append(f"({dropped} bytes of output since the last read were omitted)")
        parts.append(f"<output>\n{text}\n</output>" if text else "(no new output)")
        lines = text.count("\n") + 1 if text else 0
        return ToolOutput(
            "\n".join(parts),
            display=ToolCallDisplay(
                summary=f"TaskOutput {shell.id} ({shell.state()}, {lines} new lines)",
                detail=text, language="text",
            ),
            metadata={"status": shell.status, "exit_code": shell.exit_code},
        )


class TaskStopTool(CompactSpec, Tool[TaskStopArgs]):
    name = "TaskStop"
    args_model = TaskStopArgs
    needs_permission = False

    def path_argument(self, args: TaskStopArgs) -> str | None:
        return None

    def describe(self, args: TaskStopArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"TaskStop {args.task_id or args.shell_id or ''}")

    async def run(self, args: TaskStopArgs, ctx: ToolContext) -> ToolOutput:
        wanted = args.task_id or args.shell_id
        if not wanted:
            raise ToolError("Give the task_id of the background shell to stop.")
        shells = shells_of(ctx)
        shell = shells.get(wanted)
        if not shell.running:
            return ToolOutput(f"{shell.id} is not running ({shell.state()}).",
                              display=ToolCallDisplay(summary=f"TaskStop {shell.id}"))
        await shells.stop(shell)
        return ToolOutput(
            f"Stopped {shell.id} ({shell.command}).",
            display=ToolCallDisplay(summary=f"TaskStop {shell.id} (stopped)"),
        )
