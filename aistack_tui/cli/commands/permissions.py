"""`aistack permissions check|explain|lint`: explain a decision, validate the settings' rules.

`check -- COMMAND` shows how a Bash command is split and which rule or mode decides;
`check --tool Edit --path P` (or `--url U` for WebFetch) does the same for other tools.
`explain` is another name for `check`.
Exit codes: check 0 allow, 1 ask, 3 deny; lint 0 clean, 1 problems; 2 bad settings/usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from aistack_tui.permissions.engine import PermissionEngine, request_for_test
from aistack_tui.permissions.explain import format_decision, lint
from aistack_tui.permissions.modes import parse_mode
from aistack_tui.permissions.rules import RuleError, layers_from_settings
from aistack_tui.permissions.types import CallSpec, PermissionMode

EXIT_BY_BEHAVIOR = {"allow": 0, "ask": 1, "deny": 3}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("permissions", help="explain permission decisions, lint rules")
    sub = p.add_subparsers(dest="permissions_action", required=True)
    check = sub.add_parser(
        "check",
        aliases=["explain"],
        help="show what the engine decides for a command or tool call",
        description="aistack permissions check -- git push --force   |   "
        "aistack permissions check --tool Edit --path src/app.py",
    )
    check.add_argument("--tool", default=None, help="tool name (default Bash)")
    check.add_argument("--path", default=None, help="file or directory for file tools")
    check.add_argument("--url", default=None, help="URL for WebFetch")
    check.add_argument("--mode", default=None, help="permission mode to check under")
    # Not dest="command": the top-level parser stores the subcommand's name there, and a
    # positional of the same name overwrote it, so every real run was "unknown command".
    check.add_argument(
        "bash_command", metavar="command", nargs=argparse.REMAINDER,
        help="the Bash command after --",
    )
    lint_parser = sub.add_parser(
        "lint", help="validate every settings layer's rules and self-tests"
    )
    for parser in (check, lint_parser):
        parser.add_argument(
            "--trust-project", action="store_true",
            help="apply this project's allow rules, mode and directories even if it is "
            "not trusted yet (left out otherwise, as in print mode)",
        )


def _additional_dirs(layers: list[tuple[str, dict[str, Any]]], project_root: Path) -> list[Path]:
    dirs: list[Path] = []
    for _, perms in layers:
        for value in (perms or {}).get("additionalDirectories", []) or []:
            if isinstance(value, str):
                path = Path(value).expanduser()
                dirs.append(path if path.is_absolute() else project_root / path)
    return dirs


def run(
    args: argparse.Namespace,
    layers: list[tuple[str, dict[str, Any]]],
    project_root: Path,
    home: Path,
    mode: str,
) -> int:
    out = sys.stdout
    try:
        chosen: PermissionMode = parse_mode(getattr(args, "mode", None) or mode)
    except ValueError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return 2
    if args.permissions_action == "lint":
        problems = lint(layers, project_root, home, chosen)
        for problem in problems:
            out.write(f"{problem}\n")
        count = sum(
            len((p or {}).get(k) or [])
            for _, p in layers
            for k in ("allow", "ask", "deny")
            if isinstance(p, dict)
        )
        if problems:
            out.write(f"{len(problems)} problem(s) in {len(layers)} settings layer(s)\n")
            return 1
        out.write(f"ok: {count} rule(s) in {len(layers)} settings layer(s)\n")
        return 0
    try:
        engine = PermissionEngine(
            layers=layers_from_settings(layers),
            mode=chosen,
            project_root=project_root,
            home=home,
            additional_directories=_additional_dirs(layers, project_root),
            cwd=Path.cwd(),
            self_test=False,
        )
    except RuleError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return 2
    tool = args.tool or "Bash"
    command = list(args.bash_command or [])
    if command[:1] == ["--"]:
        command = command[1:]
    test: CallSpec = {"tool": tool}
    if tool == "Bash":
        if not command:
            sys.stderr.write(
                "aistack: give the command after --, e.g. aistack permissions check -- git status\n"
            )
            return 2
        test["command"] = " ".join(command) if len(command) > 1 else command[0]
    elif tool == "WebFetch":
        if not args.url:
            sys.stderr.write("aistack: --url is required for WebFetch\n")
            return 2
        test["url"] = args.url
    elif args.path is not None:
        test["path"] = args.path
    elif tool in ("Read", "Edit", "Write", "MultiEdit"):
        sys.stderr.write(f"aistack: --path is required for {tool}\n")
        return 2
    request = request_for_test(test)
    decision = engine.check(request)
    out.write(format_decision(request, decision, chosen) + "\n")
    return EXIT_BY_BEHAVIOR[decision.behavior]
