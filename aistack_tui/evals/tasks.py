"""Eval tasks: a fixture repository, a prompt and a checker, read from `tasks/<name>/`.

Layout of one task::

    tasks/<name>/task.json   {"prompt": ..., "check": {"command": "..."} | {"python": "check.py"},
                              "max_turns": 12, "timeout": 300, "allow": ["Bash(...)"]}
    tasks/<name>/repo/...    the files the agent starts from
    tasks/<name>/check.py    (optional) a Python checker, kept outside the agent's repo

A `command` checker runs in the repo and may use `{python}` for this interpreter; its own
command is allowed for the agent too, so the model can run the tests it is judged by.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

TASKS_DIR = Path(__file__).parent / "tasks"
DEFAULT_MAX_TURNS = 12
DEFAULT_TIMEOUT = 300.0


class TaskError(Exception):
    """A task folder is malformed or a task name is unknown; the message names it."""


@dataclass(frozen=True, slots=True)
class EvalTask:
    name: str
    prompt: str
    directory: Path
    check_command: str | None = None
    check_python: Path | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    timeout: float = DEFAULT_TIMEOUT
    allow: list[str] = field(default_factory=list)

    @property
    def repo(self) -> Path:
        return self.directory / "repo"

    def checker_argv(self) -> list[str]:
        """The checker as an argv (a command string goes through bash)."""
        if self.check_python is not None:
            return [sys.executable, str(self.check_python)]
        assert self.check_command is not None
        return ["bash", "-c", self.command()]

    def command(self) -> str:
        return (self.check_command or "").replace("{python}", sys.executable)

    def allow_rules(self) -> list[str]:
        rules = list(self.allow)
        if self.check_command:
            rules.append(f"Bash({self.command()})")
        return rules


def load_task(directory: Path) -> EvalTask:
    spec_path = directory / "task.json"
    try:
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TaskError(f"{spec_path}: cannot read the task ({e})") from e
    if not isinstance(spec, dict) or not isinstance(spec.get("prompt"), str):
        raise TaskError(f"{spec_path}: needs a string \"prompt\"")
    check = spec.get("check")
    if not isinstance(check, dict) or not (
        isinstance(check.get("command"), str) or isinstance(check.get("python"), str)
    ):
        raise TaskError(f"{spec_path}: \"check\" needs a \"command\" or a \"python\" file")
    python = directory / check["python"] if isinstance(check.get("python"), str) else None
    if python is not None and not python.is_file():
        raise TaskError(f"{spec_path}: checker {python.name} does not exist")
    if not (directory / "repo").is_dir():
        raise TaskError(f"{directory}: has no repo/ folder")
    allow = spec.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise TaskError(f"{spec_path}: \"allow\" must be a list of permission rules")
    return EvalTask(
        name=directory.name,
        prompt=spec["prompt"],
        directory=directory,
        check_command=check.get("command") if python is None else None,
        check_python=python,
        max_turns=int(spec.get("max_turns", DEFAULT_MAX_TURNS)),
        timeout=float(spec.get("timeout", DEFAULT_TIMEOUT)),
        allow=list(allow),
    )


def load_tasks(names: list[str] | None = None, tasks_dir: Path = TASKS_DIR) -> list[EvalTask]:
    """Every task (sorted by name), or the named ones in the order given."""
    available = {d.name: d for d in sorted(tasks_dir.iterdir()) if (d / "task.json").is_file()}
    if not names:
        return [load_task(d) for d in available.values()]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise TaskError(
            f"unknown eval task(s): {', '.join(unknown)}; see `aistack eval --list`"
        )
    return [load_task(available[n]) for n in names]
