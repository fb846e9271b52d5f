"""The `Task` tool: a child agent with its own conversation for a self-contained job.

The child gets a clone of the parent's tools without `Task` (no recursion), the parent's
permission engine (same mode, rules and session grants) and approver (in the TUI its
asks use the parent's dialog). Its final text is the tool result; its tokens and cost
are added to the parent's totals. Parallel `Task` calls in one message run concurrently
because the tool runner runs calls concurrently and `Task` takes no lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from aistack_tui.agent import events as ev
from aistack_tui.tools.base import Tool, ToolArgs, ToolCallDisplay, ToolContext, ToolOutput

if TYPE_CHECKING:
    from aistack_tui.agent.runtime import Agent

SUBAGENT_MAX_TURNS = 40
SUBAGENT_PROMPT = (
    "You are a subagent of aistack, started by the main agent for one self-contained task. "
    "Work autonomously with your tools, then reply with a concise final report: what you "
    "found or changed (with file paths), and anything the main agent must know. Your final "
    "message is all the main agent sees."
)


class TaskArgs(ToolArgs):
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The full task for the subagent to perform")


class TaskTool(Tool[TaskArgs]):
    name: ClassVar[str] = "Task"
    args_model: ClassVar[type[ToolArgs]] = TaskArgs
    read_only: ClassVar[bool] = False
    needs_permission: ClassVar[bool] = False

    def __init__(self, parent: Callable[[], Agent]) -> None:
        self._parent = parent

    def describe(self, args: TaskArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"Task {args.description}", detail=args.prompt)

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolOutput:
        return await self.run_with_events(args, ctx, lambda _e: None, "")

    async def run_with_events(
        self,
        args: TaskArgs,
        ctx: ToolContext,
        emit: Callable[[ev.AgentEvent], None],
        tool_use_id: str,
    ) -> ToolOutput:
        from aistack_tui.agent.runtime import Agent
        from aistack_tui.agent.tool_runner import ToolRunner

        parent = self._parent()
        child_context = dataclasses.replace(
            ctx, read_files={}, bash_cwd=None, todos=[], file_locks=ctx.file_locks
        )
        runner = ToolRunner(
            tools=parent.runner.tools.clone(exclude={self.name}),
            permissions=parent.runner.permissions,
            approver=parent.runner.approver,
            context=child_context,
            results_dir=parent.runner.results_dir,
            pre_tool_hook=parent.runner.pre_tool_hook,
            post_tool_hook=parent.runner.post_tool_hook,
            before_mutation=parent.runner.before_mutation,
        )
        child = Agent(
            provider=parent.provider_for("subagent") or parent.provider,
            model_info=parent.model_info,
            runner=runner,
            system_prompt=f"{parent.system_prompt}\n\n{SUBAGENT_PROMPT}",
            retry_policy=parent.retry_policy,
            max_turns=SUBAGENT_MAX_TURNS,
            max_output_tokens=parent.max_output_tokens,
        )
        end: ev.TurnEnded | None = None
        error = ""
        async for event in child.run(args.prompt):
            emit(ev.SubagentEvent(tool_use_id, args.description, event))
            if isinstance(event, ev.TurnEnded):
                end = event
            elif isinstance(event, ev.ErrorOccurred):
                error = event.message
        for model, usage in child.totals.by_model.items():
            parent.totals.add(model, usage, None)
        if child.totals.cost_usd is not None:
            parent.totals.cost_usd = (parent.totals.cost_usd or 0.0) + child.totals.cost_usd
        parent.runner.denials.extend(runner.denials)
        turns = end.num_turns if end else 0
        summary = f"Task {args.description} ({turns} turns)"
        if end is None or end.reason not in ("completed", "max_turns"):
            reason = error or (end.reason if end else "no result")
            text = end.final_text if end else ""
            return ToolOutput(
                content=f"The subagent did not finish ({reason}). Partial result:\n{text}",
                is_error=True,
                display=ToolCallDisplay(summary=summary + " failed"),
            )
        text = end.final_text or "(the subagent gave no final text)"
        if end.reason == "max_turns":
            text += f"\n\n[The subagent stopped after {SUBAGENT_MAX_TURNS} turns.]"
        return ToolOutput(content=text, display=ToolCallDisplay(summary=summary))
