"""Run eval tasks: copy the fixture into a fresh git repo, let the agent work, check it.

Each task gets its own session through the composition root (`open_session`), exactly
as a user would run it: `acceptEdits` mode, the checker's command allowed, every other
ask denied (`DenyAll`, as in print mode), memory and knowledge injection off so runs are
comparable. The checker runs after the agent stops and alone decides pass or fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from aistack_tui.evals.store import EvalStore, TaskResult
from aistack_tui.evals.tasks import EvalTask
from aistack_tui.hardened_git import hardened_git
from aistack_tui.tools.process import kill_tree

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig

CHECK_TIMEOUT = 120.0
DETAIL_CHARS = 2000
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "aistack-eval",
    "GIT_AUTHOR_EMAIL": "eval@aistack.invalid",
    "GIT_COMMITTER_NAME": "aistack-eval",
    "GIT_COMMITTER_EMAIL": "eval@aistack.invalid",
}

Progress = Callable[[EvalTask, TaskResult], None]


def prepare_repo(task: EvalTask, parent: Path) -> Path:
    """Copy the task's files into `parent/<name>` and commit them, as a real project."""
    work = parent / task.name
    shutil.copytree(task.repo, work)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-q", "--no-verify", "-m", "task fixture"],
    ):
        call = hardened_git(*args, env=GIT_IDENTITY)
        subprocess.run(call.argv, cwd=work, env=call.env, check=True, capture_output=True)
    return work


async def run_checker(task: EvalTask, work: Path) -> tuple[bool, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(work), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = await asyncio.create_subprocess_exec(
        *task.checker_argv(),
        cwd=work,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), CHECK_TIMEOUT)
    except TimeoutError:
        kill_tree(proc.pid)
        await proc.wait()
        return False, f"checker timed out after {CHECK_TIMEOUT:.0f} s"
    text = out.decode("utf-8", "replace").strip()
    return proc.returncode == 0, text[-DETAIL_CHARS:]


async def run_task(task: EvalTask, base: RunConfig, model: str, parent: Path) -> TaskResult:
    """One task, start to finish. Configuration errors (no provider) propagate."""
    from aistack_tui.agent import events as ev
    from aistack_tui.agent.ports import DenyAll
    from aistack_tui.bootstrap import open_session
    from aistack_tui.session.config import make_run_config

    work = prepare_repo(task, parent)
    config = make_run_config(
        cwd=work,
        env=base.env,
        model=model,
        permission_mode="acceptEdits",
        allowed_tools=task.allow_rules(),
        max_turns=task.max_turns,
        no_memory=True,
        no_knowledge=True,
    )
    started = time.monotonic()
    session = await open_session(config, DenyAll())
    end: ev.TurnEnded | None = None
    errors: list[str] = []
    reason = "completed"
    try:
        async with asyncio.timeout(task.timeout):
            async for event in session.run(task.prompt):
                # Two kinds matter here; a dispatch over every kind would be a `match`.
                if isinstance(event, ev.TurnEnded):
                    end = event
                elif isinstance(event, ev.ErrorOccurred):
                    errors.append(event.message)
    except TimeoutError:
        reason = "timeout"
    finally:
        await session.close()
    totals = session.usage
    if end is not None:
        reason = end.reason
    passed, output = await run_checker(task, work)
    detail = "" if passed else "\n".join([*errors, output]).strip()[-DETAIL_CHARS:]
    return TaskResult(
        task=task.name,
        passed=passed,
        turns=end.num_turns if end is not None else 0,
        input_tokens=totals.usage.input_tokens + totals.usage.cache_read_input_tokens
        + totals.usage.cache_creation_input_tokens,
        output_tokens=totals.usage.output_tokens,
        cost_usd=totals.cost_usd,
        duration_s=time.monotonic() - started,
        reason=reason,
        detail=detail,
    )


async def run_eval(
    base: RunConfig,
    model: str,
    tasks: list[EvalTask],
    store: EvalStore,
    progress: Progress | None = None,
) -> str:
    """Run `tasks` in order against `model`, recording each result; returns the run id."""
    run_id = await store.start_run(model)
    with tempfile.TemporaryDirectory(prefix="aistack-eval-") as tmp:
        for task in tasks:
            result = await run_task(task, base, model, Path(tmp))
            await store.add_result(run_id, result)
            if progress is not None:
                progress(task, result)
    await store.finish_run(run_id)
    return run_id
