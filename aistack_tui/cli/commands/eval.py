"""`aistack eval [--model M] [--tasks A,B] [--compare RUN_A RUN_B] [--list]`.

Runs the bundled coding tasks against a model and prints a table (pass/fail, turns,
tokens, cost, time per task); every run is kept in `$AISTACK_HOME/evals.db` so two runs
(`latest`, `previous`, an id or an id prefix) can be compared side by side.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.evals.store import TaskResult
    from aistack_tui.evals.tasks import EvalTask
    from aistack_tui.session.config import RunConfig

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "eval", help="run the coding-task evals against a model, or compare two runs"
    )
    p.add_argument("-m", "--model", metavar="PROVIDER/MODEL", help="model to evaluate")
    p.add_argument("--tasks", metavar="NAME,...", help="only these tasks (comma separated)")
    p.add_argument(
        "--compare", nargs=2, metavar=("RUN_A", "RUN_B"),
        help="print two stored runs side by side (ids, prefixes, latest, previous)",
    )
    p.add_argument("--list", action="store_true", help="list the tasks and past runs")


async def run(args: argparse.Namespace, config: RunConfig) -> int:
    from aistack_tui.evals.store import EvalStore
    from aistack_tui.evals.tasks import TaskError, load_tasks
    from aistack_tui.storage.db import StorageError

    try:
        names = [n.strip() for n in (args.tasks or "").split(",") if n.strip()]
        tasks = load_tasks(names or None)
    except TaskError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return EXIT_USAGE
    try:
        store = await EvalStore.open(config.home)
    except StorageError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return EXIT_FAILED
    try:
        if args.list:
            return await _list(tasks, store)
        if args.compare:
            return await _compare(store, args.compare[0], args.compare[1])
        return await _run(args, config, tasks, store)
    finally:
        await store.close()


async def _list(tasks: list[EvalTask], store: Any) -> int:
    from aistack_tui.evals.report import summary

    out = sys.stdout
    width = max(len(t.name) for t in tasks)
    out.write("tasks:\n")
    for task in tasks:
        out.write(f"  {task.name:<{width}}  {task.prompt}\n")
    runs = await store.runs()
    if runs:
        out.write("runs:\n")
        for r in runs:
            out.write(f"  {summary(r)}\n")
    return EXIT_OK


async def _compare(store: Any, key_a: str, key_b: str) -> int:
    from aistack_tui.evals.report import format_compare

    runs = []
    for key in (key_a, key_b):
        run_id = await store.resolve(key)
        found = await store.get(run_id) if run_id else None
        if found is None:
            sys.stderr.write(
                f"aistack: no eval run {key!r} (or the prefix is ambiguous); "
                "see `aistack eval --list`\n"
            )
            return EXIT_USAGE
        runs.append(found)
    sys.stdout.write(format_compare(runs[0], runs[1]) + "\n")
    return EXIT_OK


async def _run(args: argparse.Namespace, config: RunConfig, tasks: list[EvalTask],
               store: Any) -> int:
    from aistack_tui.evals.report import format_run
    from aistack_tui.evals.runner import run_eval
    from aistack_tui.session.providers import resolve_model_string
    from aistack_tui.settings.layers import ConfigError

    if args.model:
        config.model = args.model
    try:
        model = resolve_model_string(config)
    except ConfigError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return EXIT_USAGE

    def progress(task: EvalTask, result: TaskResult) -> None:
        mark = "PASS" if result.passed else "FAIL"
        sys.stderr.write(f"  {mark} {task.name} ({result.turns} turns, "
                         f"{result.duration_s:.1f}s)\n")

    sys.stderr.write(f"running {len(tasks)} eval task(s) against {model}\n")
    try:
        run_id = await run_eval(config, model, tasks, store, progress)
    except ConfigError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return EXIT_USAGE
    run = await store.get(run_id)
    assert run is not None
    sys.stdout.write(format_run(run) + "\n")
    return EXIT_OK
