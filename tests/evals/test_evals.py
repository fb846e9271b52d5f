"""`aistack eval` runs the whole task set against the fake LLM server and compares runs."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
from pathlib import Path

import pytest

from aistack_tui.cli.commands import eval as eval_cmd
from aistack_tui.evals.runner import prepare_repo, run_checker
from aistack_tui.evals.tasks import TaskError, load_task, load_tasks
from aistack_tui.session.config import make_run_config
from fakes.fake_llm import FakeLLMServer
from tests.e2e.helpers import FAST_RETRY, write_user_settings
from tests.evals.solutions import SOLUTIONS, ScriptedModel

MODEL = "anthropic/claude-sonnet-4-6"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    eval_cmd.register(sub)
    return parser.parse_args(["eval", *argv])


def test_there_are_at_least_ten_tasks_each_with_a_solution() -> None:
    tasks = load_tasks()
    assert len(tasks) >= 10
    assert {t.name for t in tasks} == set(SOLUTIONS)


@pytest.mark.parametrize("task", load_tasks(), ids=lambda t: t.name)
async def test_each_fixture_fails_its_checker_before_any_work(task, tmp_path: Path) -> None:
    """A checker that passes on the untouched fixture would measure nothing."""
    work = prepare_repo(task, tmp_path)
    passed, _ = await run_checker(task, work)
    assert not passed


async def test_eval_runs_every_task_and_compares_two_runs(
    git_repo: Path, aistack_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    strong, weak = ScriptedModel(), ScriptedModel(skip={"fix-typo", "add-cli-flag"})
    with FakeLLMServer(strong.turns(200)) as server:
        env = {**os.environ, **server.env("anthropic")}
        config = make_run_config(cwd=git_repo, env=env)
        assert await eval_cmd.run(parse("--model", MODEL), config) == 0
        first = capsys.readouterr().out
        server.reset()
        server.add(*weak.turns(200))
        assert await eval_cmd.run(parse("--model", MODEL), config) == 0
        second = capsys.readouterr().out

    n = len(load_tasks())
    assert f"passed {n}/{n} (100%)" in first, first
    assert f"passed {n - 2}/{n}" in second, second
    assert "fix-typo" in second and "FAIL" in second

    db = sqlite3.connect(aistack_home / "evals.db")
    runs = db.execute("SELECT id, model FROM eval_runs ORDER BY started_at").fetchall()
    assert [m for _, m in runs] == [MODEL, MODEL]
    row = db.execute(
        "SELECT passed, turns, input_tokens, output_tokens, cost_usd, duration_s, reason"
        " FROM eval_results WHERE run_id = ? AND task = 'make-failing-test-pass'",
        (runs[0][0],),
    ).fetchone()
    assert row[0] == 1 and row[1] == 4  # read, edit, run the allowed test command, answer
    assert row[2] > 0 and row[3] > 0 and row[5] > 0 and row[6] == "completed"
    assert row[4] is None or row[4] > 0
    db.close()

    assert await eval_cmd.run(parse("--compare", "previous", "latest"), config) == 0
    table = capsys.readouterr().out
    assert "regressed" in table
    assert [line.split()[0] for line in table.splitlines() if "regressed" in line] == [
        "add-cli-flag", "fix-typo"]
    assert f"passed: A {n}, B {n - 2} (-2)" in table


async def test_eval_list_and_bad_input_are_clear(
    git_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_run_config(cwd=git_repo)
    assert await eval_cmd.run(parse("--list"), config) == 0
    assert "fix-syntax-error" in capsys.readouterr().out
    assert await eval_cmd.run(parse("--tasks", "nope"), config) == 2
    assert "unknown eval task(s): nope" in capsys.readouterr().err
    assert await eval_cmd.run(parse("--compare", "x", "y"), config) == 2
    assert "no eval run 'x'" in capsys.readouterr().err
    assert await eval_cmd.run(parse("--tasks", "fix-typo"), config) == 2
    assert "no LLM provider" in capsys.readouterr().err


def test_a_malformed_task_names_its_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    (bad / "repo").mkdir(parents=True)
    (bad / "task.json").write_text(json.dumps({"prompt": "x", "check": {}}))
    with pytest.raises(TaskError, match=r"task\.json.*check"):
        load_task(bad)
