"""PresentPlan: the model proposes a plan, the user approves it, subagents carry it out.

The tool needs no permission (it changes nothing by itself), so it is the one way out of
plan mode the model has. Its run asks the user through the runner's approver with the
rendered plan as the dialog's body; a rejection and its feedback go back to the model.
On approval the permission mode becomes `acceptEdits` (from `plan` or `default`; a more
permissive mode the user chose is kept) and each step runs as a subagent built exactly
like a `Task` child, as soon as the steps it depends on completed (`planning.execute_plan`).
Each step sees the whole plan and the reports of its dependencies; the tool result is a
report per step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from aistack_tui.agent import events as ev
from aistack_tui.agent.planning import (
    MAX_PARALLEL_STEPS,
    PlanError,
    PlanStep,
    StepReport,
    execute_plan,
    format_report,
    plan_layers,
    render_plan,
)
from aistack_tui.agent.ports import ApprovalRequest
from aistack_tui.agent.subagents import SUBAGENT_MAX_TURNS, build_child_agent, run_child
from aistack_tui.permissions.types import Decision, PermissionChecker, PermissionDenial
from aistack_tui.tools.base import Tool, ToolArgs, ToolCallDisplay, ToolContext, ToolOutput
from aistack_tui.tools.schema import CompactSpec

if TYPE_CHECKING:
    from aistack_tui.agent.runtime import Agent

STEP_FAILED = "STEP FAILED:"
"""A step's subagent starts its final answer with this when it could not do the step."""
MAX_DEPENDENCY_REPORT_CHARS = 6000
APPROVAL_REASON = (
    "Approve this plan? On yes, the permission mode switches to acceptEdits and subagents "
    "carry out the steps (independent steps at the same time)."
)

STEP_PROMPT = """\
You are carrying out one step of a plan the user has approved.

The whole plan, for context (other agents carry out the other steps, some at the same \
time as you: do not do their work):

{plan}

Your step: [{id}] {title}
{detail}
{dependencies}
Do this step now with your tools; edits inside the project are allowed. When you are \
done, reply with a concise report: what you changed (with file paths) and anything the \
later steps need to know. If you cannot complete the step, start your reply with \
"{failed}" and say why."""


class PresentPlanArgs(ToolArgs):
    steps: list[PlanStep] = Field(description="In a sensible reading order")
    goal: str = Field(default="", description="What the plan achieves, in one sentence")


class PresentPlanTool(CompactSpec, Tool[PresentPlanArgs]):
    name: ClassVar[str] = "PresentPlan"
    args_model: ClassVar[type[ToolArgs]] = PresentPlanArgs
    read_only: ClassVar[bool] = False
    needs_permission: ClassVar[bool] = False

    def __init__(
        self,
        parent: Callable[[], Agent],
        permissions: PermissionChecker | None = None,
        *,
        max_parallel: int = MAX_PARALLEL_STEPS,
    ) -> None:
        self._parent = parent
        self._permissions = permissions
        self.max_parallel = max_parallel

    def path_argument(self, args: PresentPlanArgs) -> str | None:
        return None

    def describe(self, args: PresentPlanArgs) -> ToolCallDisplay:
        count = len(args.steps)
        return ToolCallDisplay(
            summary=f"PresentPlan ({count} step{'s' if count != 1 else ''})",
            detail=render_plan(args.steps, args.goal),
        )

    async def run(self, args: PresentPlanArgs, ctx: ToolContext) -> ToolOutput:
        return await self.run_with_events(args, ctx, lambda _e: None, "")

    async def run_with_events(
        self,
        args: PresentPlanArgs,
        ctx: ToolContext,
        emit: Callable[[ev.AgentEvent], None],
        tool_use_id: str,
    ) -> ToolOutput:
        try:
            plan_layers(args.steps)
        except PlanError as e:
            return ToolOutput(
                f"Error: the plan was not shown to the user because it cannot run: {e}. "
                "Fix it and call PresentPlan again.",
                is_error=True,
                display=ToolCallDisplay(summary="PresentPlan: invalid plan", detail=str(e)),
            )
        parent = self._parent()
        permissions = self._permissions or parent.runner.permissions
        rendered = render_plan(args.steps, args.goal)
        tool_input = args.model_dump(exclude_defaults=True)
        decision = Decision("ask", APPROVAL_REASON)
        emit(ev.PermissionAsked(tool_use_id, self.name, decision))
        answer = await parent.runner.approver.decide(
            ApprovalRequest(
                tool_use_id, self.name, tool_input, decision,
                ToolCallDisplay(summary=self.describe(args).summary, detail=rendered),
            )
        )
        if not answer.approved:
            reason = "The user rejected the plan."
            parent.runner.denials.append(
                PermissionDenial(self.name, tool_use_id, tool_input, reason)
            )
            emit(ev.PermissionDecided(tool_use_id, self.name, "deny", reason, tool_input))
            said = (
                f" The user said: {answer.feedback}" if answer.feedback
                else " They gave no reason; ask what they want changed if it is not clear."
            )
            return ToolOutput(
                f"{reason} Nothing was changed.{said} The permission mode is still "
                f"{permissions.mode}: revise the plan and call PresentPlan again.",
                is_error=True,
                display=ToolCallDisplay(summary="Plan rejected", detail=answer.feedback),
            )
        approved = f"plan approved ({answer.kind})"
        emit(ev.PermissionDecided(tool_use_id, self.name, "allow", approved))
        if permissions.mode in ("plan", "default"):
            permissions.mode = "acceptEdits"
        emit(ev.ToolStarted(tool_use_id, self.name))  # the card leaves "asking" for "running"
        emit(ev.Notice(
            f"Plan approved: running {len(args.steps)} steps in mode {permissions.mode}.",
            "info",
        ))

        async def run_step(step: PlanStep, deps: list[StepReport]) -> StepReport:
            return await self._run_step(parent, ctx, emit, tool_use_id, rendered, step, deps)

        reports = await execute_plan(args.steps, run_step, max_parallel=self.max_parallel)
        report = format_report(reports)
        done = sum(r.status == "completed" for r in reports)
        return ToolOutput(
            f"{report}\n\nThe permission mode is now {permissions.mode}.",
            is_error=done < len(reports),
            display=ToolCallDisplay(
                summary=f"Plan: {done}/{len(reports)} steps completed", detail=report
            ),
        )

    async def _run_step(
        self,
        parent: Agent,
        ctx: ToolContext,
        emit: Callable[[ev.AgentEvent], None],
        tool_use_id: str,
        rendered: str,
        step: PlanStep,
        deps: list[StepReport],
    ) -> StepReport:
        child = build_child_agent(parent, ctx)
        prompt = step_prompt(rendered, step, deps)
        result = await run_child(
            parent, child, prompt, emit, tool_use_id, f"[{step.id}] {step.title}"
        )
        end = result.end
        turns = end.num_turns if end else 0
        text = (end.final_text if end else "").strip()
        if end is None or end.reason not in ("completed", "max_turns"):
            why = result.error or (end.reason if end else "no result")
            return StepReport(step, "failed", f"The subagent did not finish ({why}). {text}",
                              turns)
        if end.reason == "max_turns":
            return StepReport(
                step, "failed",
                f"The subagent stopped after {SUBAGENT_MAX_TURNS} turns without finishing. "
                f"{text}",
                turns,
            )
        if text.upper().startswith(STEP_FAILED):
            return StepReport(step, "failed", text[len(STEP_FAILED):].strip(), turns)
        return StepReport(step, "completed", text or "(the subagent gave no report)", turns)


def step_prompt(rendered_plan: str, step: PlanStep, deps: list[StepReport]) -> str:
    """The first message of a step's subagent: the plan, its step, its inputs."""
    dependencies = ""
    if deps:
        blocks = [
            f"### [{d.step.id}] {d.step.title}\n{_clip(d.text)}" for d in deps
        ]
        dependencies = (
            "\nReports of the steps this one depends on (already completed):\n\n"
            + "\n\n".join(blocks) + "\n"
        )
    return STEP_PROMPT.format(
        plan=rendered_plan,
        id=step.id,
        title=step.title,
        detail=step.detail.strip(),
        dependencies=dependencies,
        failed=STEP_FAILED,
    )


def _clip(text: str) -> str:
    if len(text) <= MAX_DEPENDENCY_REPORT_CHARS:
        return text
    return text[:MAX_DEPENDENCY_REPORT_CHARS] + "\n[… report shortened]"
