"""Explain decisions and lint settings: `aistack permissions check` and `... lint`.

Lint finds what a reader of a settings file cannot see: a rule that is malformed, one that
a broader deny (or ask) makes pointless, one that can never match because of how the
engine works (compound commands are split, wrappers are looked through, paths are
resolved), and self-tests (`permissions.tests`) whose expectation no longer holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.json_values import as_list, as_object
from aistack_tui.permissions.bash import SHELLS
from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import (
    Rule,
    RuleError,
    RuleLayer,
    bash_rule_matches,
    compile_path_rule,
    domain_rule_matches,
    layers_from_settings,
    parse_rule,
    rule_covers_tool,
)
from aistack_tui.permissions.types import Decision, PermissionMode, PermissionRequest


@dataclass(frozen=True, slots=True)
class LintProblem:
    source: str
    rule: str
    kind: str  # malformed | shadowed | never-matches | self-test
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.kind}: {self.rule}: {self.message}"


def format_decision(request: PermissionRequest, decision: Decision, mode: str) -> str:
    """The plain-text report `permissions check` prints."""
    target = (
        request.tool_input.get("command")
        or request.tool_input.get("file_path")
        or request.tool_input.get("path")
        or request.tool_input.get("url")
        or ""
    )
    lines = [
        f"tool:     {request.tool_name}" + (f"  {target}" if target else ""),
        f"mode:     {mode}",
        f"decision: {decision.behavior.upper()}",
        f"reason:   {decision.reason}",
        f"decided by: {f'rule {decision.rule}' if decision.rule else 'mode / built-in checks'}",
    ]
    if decision.parts:
        lines.append("parts:")
        lines.extend(f"  - {p}" for p in decision.parts)
    for w in decision.warnings:
        lines.append(f"warning:  {w}")
    if decision.suggested_rule:
        lines.append(f"to stop asking, allow: {decision.suggested_rule}")
    return "\n".join(lines)


# --- lint -------------------------------------------------------------------------------

_OPERATORS = re.compile(r"&&|\|\||;|\||\$\(|`|>|<|\n")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_LOOKED_THROUGH = frozenset(
    {
        "timeout",
        "nice",
        "nohup",
        "time",
        "env",
        "xargs",
        "command",
        "builtin",
        "exec",
        "stdbuf",
        "ionice",
        "setsid",
        "eval",
        "watch",
    }
)


def _never_matches(rule: Rule, allow_list: bool) -> str | None:
    spec = rule.specifier or ""
    if rule.tool == "Bash" and rule.kind != "tool":
        head = spec[:-2] if spec.endswith(":*") else spec
        if _OPERATORS.search(head):
            return "compound commands are checked part by part, so this never matches"
        first = rule.tokens[0] if rule.tokens else head.split(" ", 1)[0]
        if _ASSIGNMENT.match(first):
            return "variable assignments are stripped before matching"
        if allow_list and (first in _LOOKED_THROUGH or (first in SHELLS and "-c" in head)):
            return f"{first} is looked through: allow the command it runs instead"
    if rule.kind == "path" and ".." in re.split(r"[/\\]", spec):
        return "paths are resolved before matching, so '..' never appears in them"
    return None


def _bash_covers(deny: Rule, other: Rule) -> bool:
    if deny.kind == "tool":
        return True
    if other.kind in ("bash_exact", "bash_prefix"):
        if deny.kind == "bash_prefix":
            n = len(deny.tokens)
            return other.tokens[:n] == deny.tokens
        if deny.kind == "bash_exact":
            return other.kind == "bash_exact" and other.tokens == deny.tokens
        if deny.kind == "bash_glob":
            return other.kind == "bash_exact" and bash_rule_matches(deny, other.tokens)
    return deny.kind == other.kind and deny.specifier == other.specifier


def _covers(broad: Rule, other: Rule, root: Path, home: Path) -> bool:
    """Whether every call `other` matches is also matched by `broad` (conservatively)."""
    if broad.kind == "mcp" or other.kind == "mcp":
        return (
            broad.kind == "mcp"
            and other.kind == "mcp"
            and (other.tool == broad.tool or other.tool.startswith(broad.tool + "__"))
        )
    if not rule_covers_tool(broad, other.tool):
        return False
    if broad.kind == "tool":
        return True
    if other.kind == "tool":
        return False
    if other.tool == "Bash":
        return _bash_covers(broad, other)
    if other.kind == "domain" and broad.kind == "domain":
        return _domain_covers(broad, other)
    if other.kind == "path" and broad.kind == "path":
        return _path_covers(broad, other, root, home)
    return False


def _domain_covers(broad: Rule, other: Rule) -> bool:
    host = other.specifier or ""
    if host.startswith("*."):
        return broad.specifier == host or (
            (broad.specifier or "").startswith("*.")
            and domain_rule_matches(broad, "zz-probe." + host[2:])
        )
    return domain_rule_matches(broad, host)


def _path_covers(broad: Rule, other: Rule, root: Path, home: Path) -> bool:
    spec = other.specifier or ""
    if broad.specifier == spec:
        return True
    compiled_broad = compile_path_rule(broad, root, home)
    compiled_other = compile_path_rule(other, root, home)
    literal = _literal(spec)
    if not any(c in literal for c in "*?["):
        return compiled_broad.matches(compiled_other.base / literal)
    static = literal.split("/")
    cut = next(i for i, part in enumerate(static) if any(c in part for c in "*?["))
    top = compiled_other.base.joinpath(*static[:cut])
    # Covered when the broad rule matches arbitrary files anywhere below the static
    # directory the other rule starts from (a probe, not a proof: lint reports it).
    probes = (top / "zz_probe.q", top / "zz_a" / "zz_b" / ".zz_probe")
    return all(compiled_broad.matches(p) for p in probes)


def _literal(spec: str) -> str:
    for prefix in ("./", "~/", "/"):
        if spec.startswith(prefix):
            return spec[len(prefix) :]
    return spec


def lint(
    raw_layers: Sequence[tuple[str, object]],
    project_root: Path,
    home: Path,
    mode: PermissionMode = "default",
) -> list[LintProblem]:
    """Every problem in every layer; an empty list means the settings are clean."""
    problems: list[LintProblem] = []
    parsed: dict[str, list[tuple[str, Rule]]] = {"allow": [], "ask": [], "deny": []}
    clean_layers: list[tuple[str, dict[str, object]]] = []
    for source, raw in raw_layers:
        perms = as_object(raw)
        if perms is None:
            problems.append(LintProblem(source, "permissions", "malformed", "must be an object"))
            continue
        good_rules: dict[str, list[str]] = {}
        for key in ("allow", "ask", "deny"):
            values = as_list(perms.get(key) or [])
            if values is None:
                problems.append(
                    LintProblem(
                        source, f"permissions.{key}", "malformed", "must be a list of strings"
                    )
                )
                continue
            good_rules[key] = []
            for text in values:
                try:
                    rule = parse_rule(text, source)
                except RuleError as e:
                    problems.append(LintProblem(source, str(text), "malformed", e.why))
                    continue
                good_rules[key].append(rule.text)
                parsed[key].append((key, rule))
                why = _never_matches(rule, key == "allow")
                if why:
                    problems.append(LintProblem(source, rule.text, "never-matches", why))
        clean_layers.append((source, {"tests": perms.get("tests", []), **good_rules}))
    for key, weaker in (("allow", ("deny", "ask")), ("ask", ("deny",))):
        for _, rule in parsed[key]:
            for stronger in weaker:
                hit = next(
                    (b for _, b in parsed[stronger] if _covers(b, rule, project_root, home)), None
                )
                if hit is not None:
                    problems.append(
                        LintProblem(
                            rule.source,
                            rule.text,
                            "shadowed",
                            f"{key} rule never takes effect: {stronger} rule {hit.text} "
                            f"({hit.source}) covers it",
                        )
                    )
                    break
    try:
        layers = layers_from_settings(clean_layers)
    except RuleError as e:
        problems.append(LintProblem(e.source, e.rule, "malformed", e.why))
        return problems
    problems.extend(self_test_problems(layers, project_root, home, mode))
    return problems


def self_test_problems(
    layers: list[RuleLayer], project_root: Path, home: Path, mode: PermissionMode
) -> list[LintProblem]:
    engine = PermissionEngine(
        layers=layers, mode=mode, project_root=project_root, home=home, self_test=False
    )
    return [
        LintProblem(source, test, "self-test", why) for source, test, why in engine.run_self_tests()
    ]
