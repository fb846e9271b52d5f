"""The plan model: validation errors for the model, layering, rendering, DAG execution."""

from __future__ import annotations

import asyncio
import time

import pytest

from aistack_tui.agent.planning import (
    PlanError,
    PlanStep,
    StepReport,
    execute_plan,
    format_report,
    plan_layers,
    render_plan,
)


def steps(*specs: tuple[str, list[str]]) -> list[PlanStep]:
    return [PlanStep(id=i, title=f"do {i}", depends_on=deps) for i, deps in specs]


def test_independent_steps_share_a_layer_and_dependants_come_after() -> None:
    plan = steps(("A", []), ("B", []), ("C", ["A", "B"]), ("D", ["C"]), ("E", []))
    layers = [[s.id for s in layer] for layer in plan_layers(plan)]
    assert layers == [["A", "B", "E"], ["C"], ["D"]]


def test_cycle_is_an_error_naming_the_cycle() -> None:
    plan = steps(("A", ["C"]), ("B", ["A"]), ("C", ["B"]), ("D", []))
    with pytest.raises(PlanError, match="cycle") as info:
        plan_layers(plan)
    message = str(info.value)
    assert "'A'" in message and "'B'" in message and "'C'" in message and "'D'" not in message


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        (steps(("A", []), ("B", ["X"])), "depends on 'X', which is not a step"),
        (steps(("A", ["A"])), "depends on itself"),
        (steps(("A", []), ("A", [])), "two steps have the id 'A'"),
        ([], "no steps"),
    ],
)
def test_malformed_plans_get_errors_the_model_can_act_on(
    plan: list[PlanStep], expected: str
) -> None:
    with pytest.raises(PlanError, match=expected):
        plan_layers(plan)


def test_blank_ids_and_unknown_keys_are_rejected() -> None:
    with pytest.raises(ValueError, match="blank"):
        PlanStep(id="  ", title="x")
    with pytest.raises(ValueError, match="Extra inputs"):
        PlanStep.model_validate({"id": "A", "title": "x", "after": ["B"]})
    assert PlanStep(id="C", title="x", depends_on=["A", "A ", "B"]).depends_on == ["A", "B"]


def test_render_numbers_steps_and_shows_dependencies_and_stages() -> None:
    plan = [
        PlanStep(id="A", title="Parser", detail="Edit src/parse.py\nadd tests"),
        PlanStep(id="B", title="Docs"),
        PlanStep(id="C", title="Wire up", depends_on=["A", "B"]),
    ]
    text = render_plan(plan, goal="Support TOML")
    assert text.splitlines()[0] == "Goal: Support TOML"
    assert "1. [A] Parser\n   Edit src/parse.py\n   add tests" in text
    assert "3. [C] Wire up\n   after: 1 [A], 2 [B]" in text
    assert text.endswith("Runs in 2 stages: (A, B) → C")


async def test_execute_runs_independent_steps_together_and_passes_results() -> None:
    plan = steps(("A", []), ("B", []), ("C", ["A", "B"]))
    spans: dict[str, tuple[float, float]] = {}
    seen: dict[str, list[str]] = {}

    async def run(step: PlanStep, deps: list[StepReport]) -> StepReport:
        began = time.monotonic()
        seen[step.id] = [d.text for d in deps]
        await asyncio.sleep(0.2)
        spans[step.id] = (began, time.monotonic())
        return StepReport(step, "completed", f"result of {step.id}", 1)

    reports = await execute_plan(plan, run)
    assert [r.status for r in reports] == ["completed"] * 3
    assert spans["A"][0] < spans["B"][1] and spans["B"][0] < spans["A"][1]  # overlapped
    assert spans["C"][0] >= max(spans["A"][1], spans["B"][1])
    assert seen["C"] == ["result of A", "result of B"]


async def test_failure_skips_only_its_dependants() -> None:
    plan = steps(("A", []), ("B", []), ("C", ["A"]), ("D", ["C"]), ("E", ["B"]))
    ran: list[str] = []

    async def run(step: PlanStep, deps: list[StepReport]) -> StepReport:
        ran.append(step.id)
        if step.id == "A":
            raise RuntimeError("disk full")
        return StepReport(step, "completed", "ok")

    reports = {r.step.id: r for r in await execute_plan(plan, run)}
    assert sorted(ran) == ["A", "B", "E"]
    assert reports["A"].status == "failed" and "disk full" in reports["A"].text
    assert reports["C"].status == "skipped" and "'A' (failed)" in reports["C"].text
    assert reports["D"].status == "skipped" and "'C' (skipped)" in reports["D"].text
    assert reports["E"].status == "completed"
    text = format_report(list(reports.values()))
    assert text.startswith("Plan finished: 2 of 5 steps completed, 1 failed, 2 skipped.")


async def test_parallelism_is_capped() -> None:
    plan = steps(*[(str(i), []) for i in range(6)])
    running = 0
    peak = 0

    async def run(step: PlanStep, deps: list[StepReport]) -> StepReport:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02)
        running -= 1
        return StepReport(step, "completed", "ok")

    await execute_plan(plan, run, max_parallel=2)
    assert peak == 2


async def test_cancelling_the_plan_cancels_running_steps() -> None:
    plan = steps(("A", []), ("B", ["A"]))
    cancelled: list[str] = []

    async def run(step: PlanStep, deps: list[StepReport]) -> StepReport:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(step.id)
            raise
        return StepReport(step, "completed", "ok")

    task = asyncio.create_task(execute_plan(plan, run))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == ["A"]
