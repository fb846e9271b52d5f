"""TodoWrite: the model's own task list for the session.

The list lives in `ToolContext.todos` (the TUI shows it; compaction keeps it), and every
call replaces it whole, which is simpler for a model than item-by-item updates. The tool
touches nothing outside the agent, so it never needs permission.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aistack_tui.tools.base import (
    TodoItem,
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolOutput,
)
from aistack_tui.tools.schema import CompactSpec

_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


class TodoArg(BaseModel):
    # Older agents' schemas also sent `id` and `priority`; ignoring unknown keys here
    # keeps models trained on them working instead of failing every update.
    model_config = ConfigDict(extra="ignore", defer_build=True)

    content: str = Field(min_length=1)
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str = Field(min_length=1)


class TodoWriteArgs(ToolArgs):
    todos: list[TodoArg]


def render_todos(todos: list[TodoItem]) -> str:
    """One line per task: `[x] done`, `[>] doing`, `[ ] to do`."""
    return "\n".join(f"{_MARKS[t.status]} {t.content}" for t in todos)


class TodoWriteTool(CompactSpec, Tool[TodoWriteArgs]):
    name = "TodoWrite"
    args_model = TodoWriteArgs
    read_only = True
    needs_permission = False

    def path_argument(self, args: TodoWriteArgs) -> str | None:
        return None

    def describe(self, args: TodoWriteArgs) -> ToolCallDisplay:
        done = sum(t.status == "completed" for t in args.todos)
        return ToolCallDisplay(summary=f"TodoWrite ({done}/{len(args.todos)} done)")

    async def run(self, args: TodoWriteArgs, ctx: ToolContext) -> ToolOutput:
        ctx.todos = [TodoItem(t.content, t.status, t.activeForm) for t in args.todos]
        rendering = render_todos(ctx.todos)
        done = sum(t.status == "completed" for t in ctx.todos)
        active = [t for t in ctx.todos if t.status == "in_progress"]
        lines = [
            f"Todo list updated ({done}/{len(ctx.todos)} completed)."
            if ctx.todos
            else "Todo list cleared."
        ]
        if rendering:
            lines.append(rendering)
        if len(active) > 1:
            lines.append(
                f"Note: {len(active)} tasks are in_progress; keep exactly one in progress "
                "at a time."
            )
        return ToolOutput(
            "\n".join(lines),
            display=ToolCallDisplay(
                summary=f"Todos: {done}/{len(ctx.todos)} done"
                + (f", now: {active[0].active_form}" if active else ""),
                detail=rendering,
            ),
        )
