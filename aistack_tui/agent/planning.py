"""Plans as data: steps with dependencies, checked, layered and run as a DAG.

A plan is what the model proposes in plan mode (`PresentPlan`): a list of steps, each
naming the steps it depends on. Everything here is independent of agents and the UI:
`plan_layers` validates a plan (duplicate ids, unknown dependencies, cycles) with errors
written for the model to act on, `render_plan` is the text the user approves, and
`execute_plan` runs the steps through an injected coroutine, each as soon as everything
it depends on has completed, so independent steps run side by side and a failed step
stops exactly the steps that need it. `agent/plan_tool.py` plugs subagents into it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_PLAN_STEPS = 30
MAX_PARALLEL_STEPS = 4
"""How many steps run at once; each is a subagent making its own model requests."""

PLAN_MODE_PROMPT = """\
# Plan mode
When the permission mode is `plan`, edits and commands that change anything are denied: \
investigate with read-only tools, then present a plan with PresentPlan (its description \
says how to write the steps). If the user rejects it, revise it from their feedback and \
present it again; do not try to edit files while in plan mode."""


class PlanError(ValueError):
    """A plan that cannot run; the message tells the model what to fix."""


class PlanStep(BaseModel):
    """One step of a plan, as the model writes it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(
        min_length=1,
        max_length=40,
        description="Short and unique, e.g. 'A' or 'parser'",
    )
    title: str = Field(min_length=1, description="What the step does, in one line")
    detail: str = Field(
        default="",
        description="Everything needed to carry it out",
    )
    depends_on: list[str] = Field(
        default_factory=list,
        description="Ids of the steps to complete first",
    )

    @field_validator("id", "title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        return value

    @field_validator("depends_on")
    @classmethod
    def _unique_deps(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(v.strip() for v in value))


def plan_layers(steps: Sequence[PlanStep]) -> list[list[PlanStep]]:
    """The steps grouped into layers: each layer depends only on earlier ones.

    Raises PlanError for an empty or oversized plan, duplicate ids, a dependency on a
    step that does not exist, and dependency cycles (naming the cycle).
    """
    if not steps:
        raise PlanError("the plan has no steps; give at least one step")
    if len(steps) > MAX_PLAN_STEPS:
        raise PlanError(
            f"the plan has {len(steps)} steps; keep it to {MAX_PLAN_STEPS} or fewer by "
            "merging small steps"
        )
    ids: dict[str, PlanStep] = {}
    for step in steps:
        if step.id in ids:
            raise PlanError(f"two steps have the id {step.id!r}; every step needs its own id")
        ids[step.id] = step
    known = ", ".join(repr(i) for i in ids)
    for step in steps:
        for dep in step.depends_on:
            if dep == step.id:
                raise PlanError(f"step {step.id!r} depends on itself; remove it from depends_on")
            if dep not in ids:
                raise PlanError(
                    f"step {step.id!r} depends on {dep!r}, which is not a step of this plan "
                    f"(step ids: {known})"
                )
    waiting = {step.id: set(step.depends_on) for step in steps}
    layers: list[list[PlanStep]] = []
    while waiting:
        ready = [s for s in steps if s.id in waiting and not waiting[s.id]]
        if not ready:
            cycle = " → ".join(repr(i) for i in _find_cycle(waiting))
            raise PlanError(
                f"the plan's dependencies form a cycle ({cycle}), so no step of it could "
                "ever start; remove one of these dependencies"
            )
        layers.append(ready)
        for step in ready:
            del waiting[step.id]
        done = {s.id for s in ready}
        for deps in waiting.values():
            deps -= done
    return layers


def _find_cycle(waiting: dict[str, set[str]]) -> list[str]:
    """One cycle among steps that can never start (each has a waiting dependency)."""
    start = next(iter(waiting))
    path: list[str] = []
    seen: dict[str, int] = {}
    node = start
    # Every node left waits on another node that is also left, so walking any waiting
    # dependency must eventually revisit a node: the part from its first visit is a cycle.
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = sorted(waiting[node])[0]
    return [*path[seen[node]:], node]


def render_plan(steps: Sequence[PlanStep], goal: str = "") -> str:
    """The plan as the user approves it: numbered steps, their dependencies and stages."""
    number = {step.id: i for i, step in enumerate(steps, 1)}
    lines: list[str] = []
    if goal.strip():
        lines += [f"Goal: {goal.strip()}", ""]
    for step in steps:
        lines.append(f"{number[step.id]}. [{step.id}] {step.title}")
        lines.extend(f"   {line}" for line in step.detail.strip().splitlines() if line.strip())
        if step.depends_on:
            after = ", ".join(f"{number.get(d, '?')} [{d}]" for d in step.depends_on)
            lines.append(f"   after: {after}")
    try:
        layers = plan_layers(steps)
    except PlanError:
        return "\n".join(lines)
    stages = [", ".join(s.id for s in layer) for layer in layers]
    lines += ["", f"Runs in {len(layers)} stage{'s' if len(layers) != 1 else ''}: "
              + " → ".join(f"({s})" if "," in s else s for s in stages)]
    return "\n".join(lines)


StepStatus: TypeAlias = Literal["completed", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class StepReport:
    """What became of one step: its status and the text later steps and the model see."""

    step: PlanStep
    status: StepStatus
    text: str
    turns: int = 0


RunStep = Callable[[PlanStep, list[StepReport]], Awaitable[StepReport]]
"""Carries out one step, given the reports of the steps it depends on (all completed)."""


async def execute_plan(
    steps: Sequence[PlanStep],
    run_step: RunStep,
    *,
    max_parallel: int = MAX_PARALLEL_STEPS,
    on_report: Callable[[StepReport], None] | None = None,
) -> list[StepReport]:
    """Run every step once its dependencies completed; reports come back in plan order.

    A step whose dependency failed or was skipped is skipped itself (never started), and
    an exception from `run_step` fails only that step. Cancelling the caller cancels
    every step still running.
    """
    layers = plan_layers(steps)
    limit = asyncio.Semaphore(max(1, max_parallel))
    tasks: dict[str, asyncio.Task[StepReport]] = {}

    async def one(step: PlanStep) -> StepReport:
        deps = [await tasks[d] for d in step.depends_on]
        blocked = [d for d in deps if d.status != "completed"]
        if blocked:
            names = ", ".join(f"{d.step.id!r} ({d.status})" for d in blocked)
            report = StepReport(step, "skipped", f"Not run: it depends on {names}.")
        else:
            async with limit:
                try:
                    report = await run_step(step, deps)
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # one broken step must not sink the others
                    report = StepReport(step, "failed", f"{type(e).__name__}: {e}")
        if on_report is not None:
            on_report(report)
        return report

    # Created layer by layer, so every dependency's task exists before its dependants'.
    for layer in layers:
        for step in layer:
            tasks[step.id] = asyncio.create_task(one(step))
    try:
        await asyncio.gather(*tasks.values())
    except BaseException:
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        raise
    return [tasks[step.id].result() for step in steps]


def format_report(reports: Sequence[StepReport]) -> str:
    """The per-step report the model reads after a plan ran."""
    counts = {status: sum(r.status == status for r in reports)
              for status in ("completed", "failed", "skipped")}
    head = (
        f"Plan finished: {counts['completed']} of {len(reports)} steps completed"
        f", {counts['failed']} failed, {counts['skipped']} skipped."
    )
    parts = [head]
    for report in reports:
        turns = f", {report.turns} turns" if report.turns else ""
        parts.append(
            f"## [{report.step.id}] {report.step.title} — {report.status}{turns}\n"
            f"{report.text.strip() or '(no report)'}"
        )
    return "\n\n".join(parts)
