"""The `Task` tool: a child agent with its own conversation for a self-contained job.

The child gets a clone of the parent's tools without `Task` or `PresentPlan` (no
recursion), the parent's permission engine (same mode, rules and session grants) and
approver (in the TUI its asks use the parent's dialog). Its final text is the tool
result; its tokens and cost are added to the parent's totals. Parallel `Task` calls in
one message run concurrently because the tool runner runs calls concurrently and `Task`
takes no lock. `build_child_agent` and `run_child` are shared with plan execution
(`agent/plan_tool.py`).

Custom subagents (`.claude/agents/*.md` and friends, loaded by the session) arrive as
`SubagentType`s: the model picks one by `subagent_type`; the child then gets only the
tools the type lists, the type's prompt as its system prompt and the type's model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from aistack_tui.agent import events as ev
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.schema import CompactSpec

if TYPE_CHECKING:
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.llm.model_info import ModelInfo
    from aistack_tui.llm.provider import Provider

SUBAGENT_MAX_TURNS = 40
MAX_SUBAGENT_STOP_CONTINUATIONS = 3
NESTING_TOOLS: frozenset[str] = frozenset({"Task", "PresentPlan"})
"""Tools that start agents; children never get them (no recursion)."""
SUBAGENT_PROMPT = (
    "You are a subagent of aistack, started by the main agent for one self-contained task. "
    "Work autonomously with your tools, then reply with a concise final report: what you "
    "found or changed (with file paths), and anything the main agent must know. Your final "
    "message is all the main agent sees."
)


GENERAL_PURPOSE = "general-purpose"


class TaskArgs(ToolArgs):
    description: str = Field(description="The task in 3-5 words")
    prompt: str = Field(description="The complete task, with its context")
    subagent_type: str = Field(
        default=GENERAL_PURPOSE,
        description="One of the types listed above",
    )


ModelChoice = Callable[[], "tuple[Provider, ModelInfo]"]


@dataclass(frozen=True, slots=True)
class SubagentType:
    """A custom subagent the model may start: its prompt, tools and model."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    """The only tools it gets (None: the main agent's, but Task)."""
    model: ModelChoice | None = None
    """Builds its model on first use (None: the subagent route or the main model). Raises
    an exception whose message says why the model cannot be used."""
    model_name: str = ""


class TaskTool(CompactSpec, Tool[TaskArgs]):
    name: ClassVar[str] = "Task"
    args_model: ClassVar[type[ToolArgs]] = TaskArgs
    read_only: ClassVar[bool] = False
    needs_permission: ClassVar[bool] = False

    def __init__(
        self,
        parent: Callable[[], Agent],
        types: Callable[[], Sequence[SubagentType]] = tuple,
    ) -> None:
        self._parent = parent
        self._types = types

    @property
    def description(self) -> str:
        lines = [f"- {GENERAL_PURPOSE}: the default; your tools (but Task) and model"]
        for t in self._types():
            tools = ", ".join(t.tools) if t.tools else "all tools"
            lines.append(f"- {t.name}: {t.description} (Tools: {tools})")
        return (super().description + "\n\nAvailable subagent types (`subagent_type`):\n"
                + "\n".join(lines))

    def describe(self, args: TaskArgs) -> ToolCallDisplay:
        kind = "" if args.subagent_type == GENERAL_PURPOSE else f" ({args.subagent_type})"
        return ToolCallDisplay(summary=f"Task {args.description}{kind}", detail=args.prompt)

    def _type(self, name: str) -> SubagentType | None:
        if name == GENERAL_PURPOSE:
            return None
        for t in self._types():
            if t.name == name:
                return t
        known = ", ".join([GENERAL_PURPOSE, *(t.name for t in self._types())])
        raise ToolError(f"Unknown subagent_type {name!r}; use one of: {known}")

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolOutput:
        return await self.run_with_events(args, ctx, lambda _e: None, "")

    async def run_with_events(
        self,
        args: TaskArgs,
        ctx: ToolContext,
        emit: Callable[[ev.AgentEvent], None],
        tool_use_id: str,
    ) -> ToolOutput:
        parent = self._parent()
        kind = self._type(args.subagent_type)
        try:
            child = build_child_agent(parent, ctx, kind=kind)
        except ToolError:
            raise
        except Exception as e:  # the type's model cannot be built (no key, unknown model)
            raise ToolError(
                f"Subagent {args.subagent_type!r} cannot start: its model "
                f"{kind.model_name if kind else ''} is not usable here: {e}"
            ) from e
        result = await run_child(parent, child, args.prompt, emit, tool_use_id, args.description)
        end, error = result.end, result.error
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


@dataclass(frozen=True, slots=True)
class ChildResult:
    """How a child agent's run ended: its last `TurnEnded` and any error message."""

    end: ev.TurnEnded | None
    error: str = ""


def build_child_agent(
    parent: Agent,
    ctx: ToolContext,
    *,
    max_turns: int = SUBAGENT_MAX_TURNS,
    kind: SubagentType | None = None,
) -> Agent:
    """A fresh agent sharing the parent's permissions, approver, hooks and file locks.

    Used by `Task` and by plan execution (`PresentPlan`). The child gets its own read
    records, Bash directory and todo list, and none of the tools that start agents, so
    nesting stays one level deep. A custom `kind` narrows its tools to those it lists and
    gives it its own prompt and model.
    """
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.agent.tool_runner import ToolRunner

    child_context = dataclasses.replace(
        ctx, read_files={}, bash_cwd=None, todos=[], file_locks=ctx.file_locks
    )
    tools = parent.runner.tools.clone(exclude=set(NESTING_TOOLS))
    if kind is not None and kind.tools is not None:
        listed = set(kind.tools)
        tools = tools.clone(exclude={n for n in tools.names() if n not in listed})
    runner = ToolRunner(
        tools=tools,
        permissions=parent.runner.permissions,
        approver=parent.runner.approver,
        context=child_context,
        results_dir=parent.runner.results_dir,
        pre_tool_hook=parent.runner.pre_tool_hook,
        post_tool_hook=parent.runner.post_tool_hook,
        notification_hook=parent.runner.notification_hook,
        before_mutation=parent.runner.before_mutation,
    )
    if kind is not None and kind.model is not None:
        provider, model_info = kind.model()
    else:
        provider, model_info = (
            parent.route_for("subagent") or (parent.provider, parent.model_info)
        )
    prompt = parent.system_prompt if kind is None else kind.prompt
    return Agent(
        provider=provider,
        model_info=model_info,
        runner=runner,
        system_prompt=f"{prompt}\n\n{SUBAGENT_PROMPT}",
        retry_policy=parent.retry_policy,
        max_turns=max_turns,
        max_output_tokens=parent.max_output_tokens,
    )


async def run_child(
    parent: Agent,
    child: Agent,
    prompt: str,
    emit: Callable[[ev.AgentEvent], None],
    tool_use_id: str,
    description: str,
) -> ChildResult:
    """Run `child` on `prompt`, forwarding its events wrapped in `SubagentEvent`s.

    Its tokens, cost and permission denials are added to the parent's, so `/cost` and
    print mode's report include the work of every subagent.
    """
    end: ev.TurnEnded | None = None
    error = ""
    hooks = parent.hook_runner
    for continuation in range(MAX_SUBAGENT_STOP_CONTINUATIONS + 1):
        async for event in child.run(prompt):
            emit(ev.SubagentEvent(tool_use_id, description, event))
            if isinstance(event, ev.TurnEnded):
                end = event
            elif isinstance(event, ev.ErrorOccurred):
                error = event.message
        if hooks is None or end is None or end.reason != "completed" or error:
            break
        # A SubagentStop hook may send the subagent back to work, as Stop does the agent.
        reason = await hooks.subagent_stop(stop_hook_active=continuation > 0)
        if reason is None or continuation == MAX_SUBAGENT_STOP_CONTINUATIONS:
            break
        prompt = f"[SubagentStop hook] {reason}"
    for model, usage in child.totals.by_model.items():
        parent.totals.add(model, usage, None)
    if child.totals.cost_usd is not None:
        parent.totals.cost_usd = (parent.totals.cost_usd or 0.0) + child.totals.cost_usd
    parent.runner.denials.extend(child.runner.denials)
    return ChildResult(end, error)
