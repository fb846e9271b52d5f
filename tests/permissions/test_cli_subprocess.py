"""`aistack permissions check|explain` run as the real console script, exit code and output.

The in-process tests in test_cli.py once built their own parser and so missed that the
top-level subcommand and `check`'s own `command` argument shared a name: every real
`aistack permissions check` answered "unknown command". These run the installed entry point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import run_aistack, write_user_settings

PERMISSIONS = {
    "permissions": {
        "allow": ["WebFetch(domain:docs.example.com)"],
        "deny": [
            "Bash(git push:*)",
            "Edit(./locked/**)",
            "WebFetch(domain:evil.example)",
        ],
    }
}


@pytest.fixture
def project(git_repo: Path, aistack_home: Path) -> Path:
    write_user_settings(aistack_home, PERMISSIONS)
    return git_repo


def _check(project: Path, *args: str, action: str = "check") -> tuple[int, str]:
    done = run_aistack(["permissions", action, *args], cwd=project)
    assert "unknown command" not in done.stderr
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("action", ["check", "explain"])
def test_bash_read_only_command_allows_with_exit_0(project: Path, action: str) -> None:
    code, out = _check(project, "--", "git", "status", action=action)
    assert code == 0, out
    assert "decision: ALLOW" in out


@pytest.mark.parametrize("action", ["check", "explain"])
def test_bash_compound_with_denied_part_denies_with_exit_3(project: Path, action: str) -> None:
    code, out = _check(project, "--", "git status && git push --force", action=action)
    assert code == 3, out
    assert "decision: DENY" in out
    assert "rule Bash(git push:*)" in out
    assert "  - git status\n  - git push --force" in out


def test_bash_unknown_write_asks_with_exit_1(project: Path) -> None:
    code, out = _check(project, "--", "rm", "-rf", "build")
    assert code == 1, out
    assert "decision: ASK" in out


def test_bash_without_command_is_usage_error(project: Path) -> None:
    code, out = _check(project)
    assert code == 2
    assert "give the command after --" in out


@pytest.mark.parametrize(
    ("args", "code", "word"),
    [
        (["--tool", "Edit", "--path", "src/app.py"], 1, "ASK"),
        (["--tool", "Edit", "--path", "src/app.py", "--mode", "acceptEdits"], 0, "ALLOW"),
        (["--tool", "Edit", "--path", "locked/x.py", "--mode", "acceptEdits"], 3, "DENY"),
        (["--tool", "Edit", "--path", "src/app.py", "--mode", "plan"], 3, "DENY"),
    ],
)
def test_edit_path_decisions(project: Path, args: list[str], code: int, word: str) -> None:
    got, out = _check(project, *args)
    assert got == code, out
    assert f"decision: {word}" in out


def test_edit_deny_names_its_rule(project: Path) -> None:
    _, out = _check(project, "--tool", "Edit", "--path", "locked/x.py", action="explain")
    assert "Edit(./locked/**)" in out


@pytest.mark.parametrize(
    ("url", "code", "word"),
    [
        ("https://docs.example.com/guide", 0, "ALLOW"),
        ("https://other.example.org/page", 1, "ASK"),
        ("https://evil.example/steal", 3, "DENY"),
    ],
)
def test_webfetch_url_decisions(project: Path, url: str, code: int, word: str) -> None:
    got, out = _check(project, "--tool", "WebFetch", "--url", url)
    assert got == code, out
    assert f"decision: {word}" in out


def test_bad_settings_exit_2_naming_the_file(git_repo: Path, aistack_home: Path) -> None:
    (aistack_home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash("]}}))
    code, out = _check(git_repo, "--", "ls")
    assert code == 2
    assert "settings.json" in out
    assert "invalid permission rule" in out


def test_bad_mode_is_exit_2(project: Path) -> None:
    code, _ = _check(project, "--mode", "yolo", "--", "ls")
    assert code == 2


def test_lint_runs_through_the_console_script(project: Path) -> None:
    code, out = _check(project, action="lint")
    assert code == 0, out
    assert out.startswith("ok: ")
