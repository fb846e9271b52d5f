"""`aistack permissions check|lint` through the real top-level subcommand parser.

These once built a parser of their own, so they could not see that `check`'s positional
`command` overwrote the top-level dispatch key; they now parse with the same parser as
`aistack` and assert the dispatch key (test_cli_subprocess.py runs the console script).
"""

from __future__ import annotations

import argparse

import pytest

from aistack_tui.cli.commands import permissions
from aistack_tui.cli.subcommands import build_subcommand_parser

from .conftest import World


def _run(
    world: World,
    argv: list[str],
    layers: list,
    capsys: pytest.CaptureFixture[str],
    mode: str = "default",
) -> tuple[int, str]:
    args = build_subcommand_parser().parse_args(argv)
    assert args.command == "permissions"
    code = permissions.run(args, layers, world.root, world.home, mode)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_check_bash_shows_parts_rule_and_decision(world: World, capsys, monkeypatch) -> None:
    monkeypatch.chdir(world.root)
    layers = [("proj/settings.json", {"deny": ["Bash(git push --force:*)"]})]
    code, out = _run(
        world, ["permissions", "check", "--", "git status && git push --force"], layers, capsys
    )
    assert code == 3
    assert "decision: DENY" in out
    assert "rule Bash(git push --force:*)" in out
    assert "  - git status\n  - git push --force" in out


def test_check_edit_path_in_accept_edits(world: World, capsys, monkeypatch) -> None:
    monkeypatch.chdir(world.root)
    code, out = _run(
        world,
        ["permissions", "check", "--tool", "Edit", "--path", "src/a.py", "--mode", "acceptEdits"],
        [],
        capsys,
    )
    assert code == 0
    assert "decision: ALLOW" in out
    assert "acceptEdits" in out


def test_check_reports_bad_settings_without_traceback(world: World, capsys) -> None:
    code, _ = _run(
        world, ["permissions", "check", "--", "ls"], [("s.json", {"allow": ["Bash("]})], capsys
    )
    assert code == 2
    assert "s.json: invalid permission rule" in _


def test_lint_exit_codes(world: World, capsys) -> None:
    code, out = _run(
        world, ["permissions", "lint"], [("s.json", {"allow": ["Bash(ls:*)"]})], capsys
    )
    assert (code, out.strip()) == (0, "ok: 1 rule(s) in 1 settings layer(s)")
    code, out = _run(
        world, ["permissions", "lint"], [("s.json", {"allow": ["Nope", "Bash(a && b)"]})], capsys
    )
    assert code == 1
    assert "s.json: malformed: Nope" in out
    assert "never-matches" in out


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += [child, *_subparsers(child)]
    return found


def test_no_subcommand_argument_overwrites_the_dispatch_key() -> None:
    parser = build_subcommand_parser()
    offenders = [
        f"{child.prog}: {action.option_strings or action.dest}"
        for child in _subparsers(parser)
        for action in child._actions
        if action.dest == "command"
    ]
    assert offenders == []


@pytest.mark.parametrize("action", ["check", "explain"])
def test_check_and_explain_dispatch_as_permissions(action: str) -> None:
    args = build_subcommand_parser().parse_args(["permissions", action, "--", "ls", "-la"])
    assert args.command == "permissions"
    assert args.bash_command[-2:] == ["ls", "-la"]
