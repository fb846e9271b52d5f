"""Plain-text tables for one eval run and for two runs side by side."""

from __future__ import annotations

from aistack_tui.evals.store import EvalRun, TaskResult


def _cost(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _total_cost(run: EvalRun) -> float | None:
    known = [r.cost_usd for r in run.results if r.cost_usd is not None]
    return sum(known) if known else None


def summary(run: EvalRun) -> str:
    n = len(run.results)
    rate = f"{100 * run.passed / n:.0f}%" if n else "-"
    tokens = sum(r.input_tokens + r.output_tokens for r in run.results)
    seconds = sum(r.duration_s for r in run.results)
    return (
        f"run {run.id}  model {run.model}  passed {run.passed}/{n} ({rate})  "
        f"tokens {tokens}  cost {_cost(_total_cost(run))}  time {seconds:.1f}s"
    )


def format_run(run: EvalRun) -> str:
    width = max([len("task"), *(len(r.task) for r in run.results)])
    lines = [
        f"{'task':<{width}}  result  turns  in_tok  out_tok      cost    time  end",
    ]
    for r in run.results:
        lines.append(
            f"{r.task:<{width}}  {'PASS' if r.passed else 'FAIL':<6}  {r.turns:>5}  "
            f"{r.input_tokens:>6}  {r.output_tokens:>7}  {_cost(r.cost_usd):>8}  "
            f"{r.duration_s:>5.1f}s  {r.reason}"
        )
    lines.append(summary(run))
    return "\n".join(lines)


def _cell(r: TaskResult | None) -> str:
    if r is None:
        return f"{'-':<6} {'':>5} {'':>7}"
    return f"{'PASS' if r.passed else 'FAIL':<6} {r.turns:>5} {r.input_tokens + r.output_tokens:>7}"


def format_compare(a: EvalRun, b: EvalRun) -> str:
    """Each task's result, turns and tokens in run A and run B, and what changed."""
    by_a = {r.task: r for r in a.results}
    by_b = {r.task: r for r in b.results}
    names = sorted(set(by_a) | set(by_b))
    width = max([len("task"), *(len(n) for n in names)])
    head = f"{'A result':<6} {'turns':>5} {'tokens':>7}"
    lines = [
        f"A = {summary(a)}",
        f"B = {summary(b)}",
        "",
        f"{'task':<{width}}  {head}  |  {head.replace('A ', 'B ')}  change",
    ]
    for name in names:
        ra, rb = by_a.get(name), by_b.get(name)
        change = ""
        if ra is not None and rb is not None and ra.passed != rb.passed:
            change = "fixed" if rb.passed else "regressed"
        elif ra is None or rb is None:
            change = "only in " + ("B" if ra is None else "A")
        lines.append(f"{name:<{width}}  {_cell(ra)}  |  {_cell(rb)}  {change}")
    delta = b.passed - a.passed
    lines.append(f"passed: A {a.passed}, B {b.passed} ({delta:+d})")
    return "\n".join(lines)
