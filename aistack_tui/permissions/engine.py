"""The permission engine: rules, then guardrails, then the mode, for every tool call.

Precedence is deny > ask > allow > mode, across all settings layers and session grants.
Every path is resolved before it is compared, every Bash command is split by `bash.py`
and each part must be allowed on its own, and any failure inside the engine becomes
"ask" (never "allow"). Each Decision says in words which rule or mode decided.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from aistack_tui.permissions import modes
from aistack_tui.permissions.bash_model import DYN, BashAnalysis, CommandPart, dangerous_env
from aistack_tui.permissions.grants import SessionGrants, append_allow_rule
from aistack_tui.permissions.guardrails import dangerous_command_warnings
from aistack_tui.permissions.paths import (
    PathError,
    expand_glob,
    is_secret,
    is_within,
    protected_reason,
    real,
    resolve_path,
    rule_path,
    secret_name_could_match,
    within_any,
)
from aistack_tui.permissions.readonly_commands import classify, env_is_safe, risky_option
from aistack_tui.permissions.rules import (
    AGENT_ONLY_TOOLS,
    EDIT_FAMILY,
    MCP_RESOURCE_TOOLS,
    READ_FAMILY,
    CompiledPathRule,
    Rule,
    RuleError,
    RuleLayer,
    bash_rule_matches,
    compile_path_rule,
    domain_rule_matches,
    parse_rule,
    resource_rule_matches,
    rule_covers_tool,
)
from aistack_tui.permissions.suggest import suggest_bash_rule
from aistack_tui.permissions.types import (
    READ_ONLY_GRANT,
    Behavior,
    CallSpec,
    Decision,
    ExecGrant,
    ExecTier,
    PermissionMode,
    PermissionRequest,
)
from aistack_tui.permissions.writes import implied_writes

_PATH_TOOLS_FILE_KEY = ("file_path", "notebook_path")


def _by(rule: Rule) -> str:
    return f"rule {rule.text} ({rule.source})"


class PermissionEngine:
    """Implements `PermissionChecker`. `mode` is mutable (Shift+Tab cycles it)."""

    def __init__(
        self,
        *,
        layers: list[RuleLayer],
        mode: PermissionMode,
        project_root: Path,
        home: Path,
        additional_directories: Sequence[Path] = (),
        extra_read_dirs: Sequence[Path] = (),
        cwd: Path | None = None,
        local_settings_path: Path | None = None,
        self_test: bool = True,
    ) -> None:
        self.mode: PermissionMode = mode
        self.project_root = real(project_root)
        self.home = real(home)
        self.additional_directories = [real(Path(d)) for d in additional_directories]
        self.extra_read_dirs = [real(Path(d)) for d in extra_read_dirs]
        self.cwd = real(cwd) if cwd is not None else self.project_root
        self.kernel_enforced = False
        self._deny_dirs_cache: dict[str, list[Path]] = {}
        """True once an OS sandbox confines every Bash command (set by the session): the
        parser may then leave tree walks to the sandbox's masks. Without it, it asks."""
        self.local_settings_path = local_settings_path or (
            Path(project_root) / ".aistack" / "settings.local.json"
        )
        self.layers = list(layers)
        self._deny: list[Rule] = []
        self._ask: list[Rule] = []
        self._allow: list[Rule] = []
        for layer in self.layers:
            self._deny += [parse_rule(t, layer.source) for t in layer.deny]
            self._ask += [parse_rule(t, layer.source) for t in layer.ask]
            self._allow += [parse_rule(t, layer.source) for t in layer.allow]
        self._grants = SessionGrants()
        self._allow_all: list[Rule] = list(self._allow)
        self._index: dict[tuple[int, str], list[Rule]] = {}
        self._resolved: dict[tuple[str, Path], Path | PathError] = {}
        self._compiled: dict[Rule, CompiledPathRule] = {}
        for rule in (*self._deny, *self._ask, *self._allow):
            self._compile(rule)
        if self_test:
            failures = self.run_self_tests()
            if failures:
                source, test, why = failures[0]
                raise RuleError(source, f"permissions.tests {test}", why)

    # --- the PermissionChecker protocol -------------------------------------------------

    def check(self, request: PermissionRequest) -> Decision:
        # Paths are resolved several times per Bash command (deny, secrets, read-only
        # checks); the cache lives for one check only, so a symlink changed later is seen.
        self._resolved = {}
        try:
            decision = self._check(request)
        except Exception as e:  # fail closed: a bug in the engine must never allow
            decision = Decision("ask", f"the permission check failed ({type(e).__name__}: {e})")
        return modes.never_ask(self.mode, decision)

    def grant_session(self, rule: str) -> None:
        self._compile(self._grants.add(rule))
        self._allow_all = [*self._allow, *self._grants.rules]
        self._index.clear()

    def session_grants(self) -> list[str]:
        """The rules granted for this session only ("yes, don't ask again")."""
        return [rule.text for rule in self._grants.rules]

    def revoke_session(self, rule: str) -> bool:
        """Forget a session grant: the next matching call asks again."""
        if not self._grants.remove(rule):
            return False
        self._allow_all = [*self._allow, *self._grants.rules]
        self._index.clear()
        return True

    def save_rule(self, rule: str) -> None:
        append_allow_rule(self.local_settings_path, rule)
        self.grant_session(rule)

    def add_rule(self, behavior: Behavior, text: str, source: str) -> Rule:
        """A rule added while the session runs (`/permissions add`): in force at once and
        listed under the layer of `source` (a new layer if none has that source)."""
        rule = parse_rule(text, source)
        layer = next((layer for layer in self.layers if layer.source == source), None)
        if layer is None:
            layer = RuleLayer(source)
            self.layers.append(layer)
        getattr(layer, behavior).append(rule.text)
        {"deny": self._deny, "ask": self._ask, "allow": self._allow}[behavior].append(rule)
        self._compile(rule)
        self._allow_all = [*self._allow, *self._grants.rules]
        self._index.clear()
        self._deny_dirs_cache.clear()
        return rule

    # --- what the sandbox enforces -------------------------------------------------------

    def hidden_from_commands(self, path: Path, tier: ExecTier) -> bool:
        """Whether the sandbox masks `path` (a resolved path) for a command of `tier`.

        A Read deny rule hides a path from every command. On the read-only tier secrets
        files are hidden too, unless an allow rule names them: a command allowed only
        because it looked read-only must not be the way round "reading secrets asks".
        """
        if self._under_deny_dirs(path, "Read") and self._path_rule(self._deny, "Read", path):
            return True
        return (
            tier == "read"
            and is_secret(path)
            and self._path_rule(self.allow_rules, "Read", path) is None
        )

    def frozen_for_commands(self, path: Path) -> bool:
        """Whether an Edit deny rule keeps `path` read-only for commands allowed to write."""
        return self._under_deny_dirs(path, "Edit") and (
            self._path_rule(self._deny, "Edit", path) is not None
        )

    def _under_deny_dirs(self, path: Path, family: str) -> bool:
        """A cheap first test for the sandbox's walk over every file of the project: can any
        deny rule of this family match below where `path` is?"""
        dirs = self._deny_dirs_cache.get(family)
        if dirs is None:
            tools = READ_FAMILY if family == "Read" else EDIT_FAMILY
            dirs = self._deny_dirs_cache[family] = self._deny_static_dirs(tools)
        return any(is_within(path, d) for d in dirs)

    def denied_roots(self) -> list[Path]:
        """The directories below which a deny rule can match (where the sandbox looks, also
        inside directories it skips when it looks for secrets, such as node_modules)."""
        return list(dict.fromkeys(self._deny_static_dirs(READ_FAMILY | EDIT_FAMILY)))

    # --- self-tests ---------------------------------------------------------------------

    def run_self_tests(self) -> list[tuple[str, str, str]]:
        """Run every layer's `permissions.tests`; (source, test, what went wrong) per failure."""
        failures: list[tuple[str, str, str]] = []
        saved = self.mode
        try:
            for layer in self.layers:
                for test in layer.tests:
                    self.mode = test.get("mode", saved)
                    decision = self.check(request_for_test(test))
                    if decision.behavior != test["expect"]:
                        failures.append(
                            (
                                layer.source,
                                _test_label(test),
                                f"expected {test['expect']}, got {decision.behavior}: "
                                f"{decision.reason}",
                            )
                        )
        finally:
            self.mode = saved
        return failures

    # --- internals ----------------------------------------------------------------------

    def _resolve(self, raw: str, cwd: Path) -> Path:
        key = (raw, cwd)
        cached = self._resolved.get(key)
        if cached is None:
            try:
                cached = resolve_path(raw, cwd, self.home)
            except PathError as e:
                cached = e
            self._resolved[key] = cached
        if isinstance(cached, PathError):
            raise cached
        return cached

    def _compile(self, rule: Rule) -> None:
        if rule.kind == "path" and rule not in self._compiled:
            self._compiled[rule] = compile_path_rule(rule, self.project_root, self.home)

    @property
    def allow_rules(self) -> list[Rule]:
        return self._allow_all

    def _first(self, rules: list[Rule], tool: str, test: Callable[[Rule], bool]) -> Rule | None:
        # Rules are indexed by tool once per rule list, so a 50-rule file costs a dict lookup
        # and a few matches instead of 50 family checks per call.
        key = (id(rules), tool)
        candidates = self._index.get(key)
        if candidates is None:
            candidates = [r for r in rules if rule_covers_tool(r, tool)]
            self._index[key] = candidates
        for rule in candidates:
            if test(rule):
                return rule
        return None

    def _check(self, request: PermissionRequest) -> Decision:
        tool = request.tool_name
        tool_input = request.tool_input
        # Typed as a dict, but built from what a model or a hook sent: anything else asks
        # instead of failing somewhere below.
        if not isinstance(cast(object, tool_input), dict):
            return Decision("ask", "the tool input is not an object")
        if not request.needs_permission or tool in AGENT_ONLY_TOOLS:
            rule = self._first(self._deny, tool, lambda r: r.kind in ("tool", "mcp"))
            if rule is not None:
                return Decision("deny", f"denied by {_by(rule)}", rule.text)
            return Decision("allow", f"{tool} acts only inside the agent")
        if tool == "Bash":
            return self._check_bash(tool_input, request.cwd)
        if tool in READ_FAMILY:
            return self._check_read_tool(tool, tool_input)
        if tool in EDIT_FAMILY:
            raw = next((tool_input[k] for k in _PATH_TOOLS_FILE_KEY if k in tool_input), None)
            if not isinstance(raw, str):
                return Decision("ask", f"{tool} was called without a file path")
            try:
                path = resolve_path(raw, self.cwd, self.home)
            except PathError as e:
                return Decision("ask", f"path refused: {e}")
            # The tool writes this resolved file or nothing (tools/file_target.py).
            return replace(self._edit_decision(tool, path), path=path)
        if tool == "WebFetch":
            return self._check_webfetch(tool_input, request.read_only)
        if tool in MCP_RESOURCE_TOOLS:
            return self._check_mcp_resource(
                tool, tool_input.get("server"), tool_input.get("uri")
            )
        return self._check_other(tool, request.read_only)

    # files

    def _path_rule(self, rules: list[Rule], tool: str, path: Path) -> Rule | None:
        # `rules` must be one of the engine's own lists (never a copy): `_first` indexes
        # them by identity, and a temporary list's id can be reused by the next one.
        def matches(rule: Rule) -> bool:
            if rule.kind == "tool":
                return True
            compiled = self._compiled.get(rule)
            return compiled is not None and compiled.matches(path)

        return self._first(rules, tool, matches)

    def _readable(self, path: Path) -> bool:
        return within_any(
            path, [self.project_root, *self.additional_directories, *self.extra_read_dirs]
        )

    def _writable(self, path: Path) -> bool:
        return within_any(path, [self.project_root, *self.additional_directories])

    def _shown(self, path: Path) -> str:
        return rule_path(path, self.project_root, self.home, tree=False) or str(path)

    def _read_decision(self, tool: str, path: Path) -> Decision:
        rule = self._path_rule(self._deny, tool, path)
        if rule is not None:
            return Decision(
                "deny", f"reading {self._shown(path)} is denied by {_by(rule)}", rule.text
            )
        rule = self._path_rule(self._ask, tool, path)
        if rule is not None:
            return Decision(
                "ask",
                f"{_by(rule)} asks before reading {self._shown(path)}",
                rule.text,
                suggested_rule=None,
            )
        rule = self._path_rule(self.allow_rules, tool, path)
        if rule is not None:
            return Decision("allow", f"allowed by {_by(rule)}", rule.text)
        if is_secret(path):
            spec = rule_path(path, self.project_root, self.home, tree=False)
            return Decision(
                "ask",
                f"{self._shown(path)} looks like a secrets file",
                suggested_rule=f"Read({spec})" if spec else None,
                warnings=(f"{self._shown(path)} may contain credentials",),
            )
        behavior, why = modes.read_fallback(self.mode, self._readable(path))
        suggested = None
        if behavior == "ask":
            spec = rule_path(
                path if path.is_dir() else path.parent, self.project_root, self.home, tree=True
            )
            suggested = f"Read({spec})" if spec else None
        return Decision(behavior, why, suggested_rule=suggested)

    def _edit_decision(self, tool: str, path: Path) -> Decision:
        rule = self._path_rule(self._deny, tool, path)
        if rule is not None:
            return Decision(
                "deny", f"writing {self._shown(path)} is denied by {_by(rule)}", rule.text
            )
        protected = protected_reason(path, self.home)
        if protected is not None:
            return Decision("ask", f"{self._shown(path)}: {protected}", warnings=(protected,))
        rule = self._path_rule(self._ask, tool, path)
        if rule is not None:
            return Decision(
                "ask", f"{_by(rule)} asks before writing {self._shown(path)}", rule.text
            )
        if self.mode == "plan":
            return Decision("deny", "mode plan: edits are not allowed while planning")
        rule = self._path_rule(self.allow_rules, tool, path)
        if rule is not None:
            return Decision("allow", f"allowed by {_by(rule)}", rule.text)
        inside = self._writable(path)
        behavior, why = modes.edit_fallback(self.mode, inside)
        suggested = None
        if behavior == "ask":
            if inside and path.parent != self.project_root:
                spec = rule_path(path.parent, self.project_root, self.home, tree=True)
            else:
                spec = rule_path(path, self.project_root, self.home, tree=False)
            suggested = f"Edit({spec})" if spec else None
        return Decision(behavior, why, suggested_rule=suggested)

    def _check_read_tool(self, tool: str, tool_input: dict[str, Any]) -> Decision:
        key = "file_path" if tool == "Read" else "path"
        raw = tool_input.get(key)
        if raw is None and tool != "Read":
            raw = "."
        if not isinstance(raw, str):
            return Decision("ask", f"{tool} was called without a usable {key}")
        try:
            paths = [resolve_path(raw, self.cwd, self.home)]
            pattern = tool_input.get("pattern") if tool == "Glob" else None
            if isinstance(pattern, str) and (
                pattern.startswith(("/", "~")) or ".." in pattern.split("/")
            ):
                paths.append(resolve_path(_static_prefix(pattern), paths[0], self.home))
        except PathError as e:
            return Decision("ask", f"path refused: {e}")
        decisions = [self._read_decision(tool, p) for p in paths]
        if tool == "Read":  # Read opens this resolved file or nothing (tools/file_target.py)
            return replace(_strictest(decisions), path=paths[0])
        return _strictest(decisions)

    # web and other tools

    def _check_webfetch(self, tool_input: dict[str, Any], read_only: bool) -> Decision:
        url = tool_input.get("url")
        if not isinstance(url, str) or not url:
            return Decision("ask", "WebFetch was called without a URL")
        host = _url_host(url)
        if host is None:
            return Decision(
                "ask", f"cannot tell which host {url[:200]!r} reaches", warnings=("unusual URL",)
            )

        def matches(rule: Rule) -> bool:
            return domain_rule_matches(rule, host)

        rule = self._first(self._deny, "WebFetch", matches)
        if rule is not None:
            return Decision("deny", f"fetching {host} is denied by {_by(rule)}", rule.text)
        rule = self._first(self._ask, "WebFetch", matches)
        if rule is not None:
            return Decision(
                "ask", f"{_by(rule)} asks before fetching {host}", rule.text, suggested_rule=None
            )
        rule = self._first(self.allow_rules, "WebFetch", matches)
        if rule is not None:
            return Decision("allow", f"allowed by {_by(rule)}", rule.text)
        behavior, why = modes.other_fallback(self.mode, "WebFetch", read_only)
        return Decision(behavior, why, suggested_rule=f"WebFetch(domain:{host})")

    def _check_mcp_resource(self, tool: str, server: object, uri: object) -> Decision:
        """Reading a server's resources: the tool's own rules (`ReadMcpResourceTool`,
        `ReadMcpResourceTool(github:repo://acme/*)`) and the server's rule (`mcp__github`
        denies or allows its resources as it does its tools) decide; with no rule it is
        allowed in every mode, since a read changes nothing."""
        server = server if isinstance(server, str) else ""
        uri = uri if isinstance(uri, str) else ""
        names = [tool] + ([f"mcp__{server}"] if server else [])

        def bare(rule: Rule) -> bool:
            if rule.kind == "resource":
                return resource_rule_matches(rule, server, uri)
            return rule.kind in ("tool", "mcp")

        checks: tuple[tuple[list[Rule], Behavior, str], ...] = (
            (self._deny, "deny", "denied"), (self._ask, "ask", "asked for"),
            (self.allow_rules, "allow", "allowed"),
        )
        for rules, behavior, verb in checks:
            for name in names:
                rule = self._first(rules, name, bare)
                if rule is not None:
                    return Decision(behavior, f"{verb} by {_by(rule)}", rule.text)
        return Decision("allow", "reading an MCP server's resources changes nothing")

    def _check_other(self, tool: str, read_only: bool) -> Decision:
        def bare(rule: Rule) -> bool:
            return rule.kind in ("tool", "mcp")

        rule = self._first(self._deny, tool, bare)
        if rule is not None:
            return Decision("deny", f"denied by {_by(rule)}", rule.text)
        rule = self._first(self._ask, tool, bare)
        if rule is not None:
            return Decision("ask", f"{_by(rule)} asks before {tool}", rule.text)
        rule = self._first(self.allow_rules, tool, bare)
        if rule is not None:
            return Decision("allow", f"allowed by {_by(rule)}", rule.text)
        behavior, why = modes.other_fallback(self.mode, tool, read_only)
        return Decision(behavior, why, suggested_rule=tool)

    # bash

    def _check_bash(self, tool_input: dict[str, Any], cwd: Path | None) -> Decision:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return Decision("ask", "Bash was called without a command")
        # The tree-sitter parser loads on the first Bash check, not at start-up.
        from aistack_tui.permissions.bash import analyze, describe

        analysis = analyze(command, real(cwd) if cwd is not None else self.cwd, self.home)
        shown = tuple(describe(analysis))

        def decision(
            behavior: Behavior,
            reason: str,
            rule: str | None = None,
            suggested: str | None = None,
            warnings: Sequence[str] = (),
        ) -> Decision:
            # An ask carries what a yes would grant, so the runner knows whether it runs git.
            grant = ExecGrant("write", True, runs_git) if behavior == "ask" else None
            return Decision(behavior, reason, rule, suggested, tuple(warnings), shown, grant)

        runs_git = any(part.argv and os.path.basename(part.argv[0]) == "git"
                       for part in analysis.parts)
        denied = self._bash_denied(analysis)
        if denied is not None:
            return decision("deny", denied[0], denied[1])
        warnings = dangerous_command_warnings(analysis, self.project_root, self.home)
        if any(p.cwd is None for p in analysis.parts) or any(
            f.cwd is None for f in analysis.files
        ):
            analysis.problems.append("a `cd` to a directory only known at run time")
        warnings += self._protected_writes(analysis)
        # A credential in a command line goes wherever the command sends it (a URL, a log):
        # that is for the user to see, in every mode.
        warnings += [
            f"passes ${name} (a credential) to a command" for name in analysis.credential_vars
        ]
        if analysis.problems:
            return decision(
                "ask", f"cannot analyse safely: {analysis.problems[0]}", warnings=warnings
            )
        if not analysis.parts and not analysis.files:
            return decision(
                "ask", "the command runs nothing that could be checked", warnings=warnings
            )
        for part in analysis.parts:
            for view in _views(part):
                rule = self._first(self._ask, "Bash", lambda r, v=view: bash_rule_matches(r, v))
                if rule is not None:
                    return decision(
                        "ask",
                        f"{_by(rule)} asks before {_show(view)}",
                        rule.text,
                        warnings=warnings,
                    )
        approvals: list[str] = []
        pending: list[tuple[Behavior, str | None, str]] = []  # behavior, suggestion, why
        writes = network = False
        for part in analysis.parts:
            if not part.needs_allow:
                continue
            behavior, suggested, why, read_only = self._bash_part(part)
            if behavior == "allow":
                approvals.append(why)
                # Only the read-only judgement keeps the kernel's read-only tier: a rule or
                # the mode allowed this part as written, with its writes and network.
                if not read_only:
                    writes = network = True
            else:
                pending.append((behavior, suggested, why))
        for f in analysis.files:
            for cwd in f.cwd or [None]:
                d = self._redirect_decision(f.path, f.write, cwd)
                if d.behavior == "allow":
                    approvals.append(f"{f.text}: {d.reason}")
                    writes = writes or f.write
                else:
                    pending.append((d.behavior, d.suggested_rule, f"{f.text}: {d.reason}"))
        if any(p[0] == "deny" for p in pending):
            first = next(p for p in pending if p[0] == "deny")
            return decision("deny", first[2], warnings=warnings)
        if pending:
            first = pending[0]
            extra = f" (and {len(pending) - 1} more)" if len(pending) > 1 else ""
            # One rule can only stand for one command: a compound or dangerous command
            # offers no "don't ask again" at all, so it is answered once.
            single = len(pending) == 1 and not warnings
            suggested = first[1] if single else None
            return decision("ask", first[2] + extra, suggested=suggested, warnings=warnings)
        if warnings:
            return decision("ask", f"dangerous command: {warnings[0]}", warnings=warnings)
        grant = ExecGrant("write", network, runs_git) if writes or network else READ_ONLY_GRANT
        return Decision(
            "allow",
            "; ".join(dict.fromkeys(approvals)) or "allowed",
            parts=shown,
            grant=grant,
        )

    def _bash_denied(self, analysis: BashAnalysis) -> tuple[str, str] | None:
        for part in analysis.parts:
            for view in _views(part):
                rule = self._first(self._deny, "Bash", lambda r, v=view: bash_rule_matches(r, v))
                if rule is not None:
                    return f"{_show(view)} is denied by {_by(rule)}", rule.text
        for f in analysis.files:
            for cwd in f.cwd or [self.cwd]:
                try:
                    path = self._resolve(f.path, cwd)
                except PathError:
                    continue
                tool = "Write" if f.write else "Read"
                rule = self._path_rule(self._deny, tool, path)
                if rule is not None:
                    return f"{f.text} touches {self._shown(path)}, denied by {_by(rule)}", rule.text
        for part in analysis.parts:
            denied = self._denied_access(part, self._implied_writes(part), "Write", "writes")
            if denied is not None:
                return denied
        for part in analysis.parts:
            denied = self._denied_access(part, self._words_reaching_files(part), "Read", "reads")
            if denied is not None:
                return denied
        return None

    def _denied_access(
        self, part: CommandPart, targets: list[tuple[str, Path]], tool: str, verb: str
    ) -> tuple[str, str] | None:
        """(reason, rule) for the first of `targets` a deny rule for `tool` covers."""
        for raw, cwd in targets:
            try:
                path = self._resolve(raw, cwd)
            except PathError:
                continue
            rule = self._path_rule(self._deny, tool, path)
            if rule is not None:
                shown = self._shown(path)
                return f"{_show(part.argv)} {verb} {shown}, denied by {_by(rule)}", rule.text
        return None

    def _implied_writes(self, part: CommandPart) -> list[tuple[str, Path]]:
        return [
            (raw, cwd) for raw in implied_writes(part.argv) for cwd in part.cwd or (self.cwd,)
        ]

    def _protected_writes(self, analysis: BashAnalysis) -> list[str]:
        """Why a command that writes without a redirection (`tee -a ~/.bashrc`, `git config`,
        `sed -i .git/hooks/x`) must ask in every mode: it writes a protected path."""
        reasons: list[str] = []
        for part in analysis.parts:
            for raw, cwd in self._implied_writes(part):
                if DYN in raw:
                    # Under the sandbox protected paths are read-only whatever the target
                    # turns out to be; without it, a target only known at run time asks.
                    if not self.kernel_enforced:
                        reasons.append(
                            f"{_show(part.argv)} writes a path only known at run time"
                        )
                    continue
                try:
                    path = self._resolve(raw, cwd)
                except PathError:
                    reasons.append(f"{_show(part.argv)} writes a path that cannot be checked")
                    continue
                why = protected_reason(path, self.home)
                if why is not None:
                    reasons.append(f"{_show(part.argv)} writes {self._shown(path)}: {why}")
        return reasons

    def _words_reaching_files(self, part: CommandPart) -> list[tuple[str, Path]]:
        """(path, cwd) for every file a part may open, for the deny rules.

        A read-only command's paths and the expansion of its globs; for any other command
        (`sed -n p .env`, `awk 1 private/x`, `curl -d @.env`) every word, `--opt=value`
        value and `@file` that names an existing file or directory: a deny rule is about
        the file, whichever program opens it.
        """
        cwds = part.cwd or (self.cwd,)
        ro = classify(part.argv, (), part.globbed)
        out: list[tuple[str, Path]] = []
        for cwd in cwds:
            if ro is not None:
                out += [(raw, cwd) for raw in ro.paths]
                for pattern in ro.globs:
                    out += [(m, cwd) for m in expand_glob(pattern, cwd) or [pattern]]
                continue
            for index, word in enumerate(part.argv[1:], start=1):
                if DYN in word:
                    continue
                candidates = [word, word.split("=", 1)[-1], word.lstrip("@")]
                if index in part.globbed:
                    candidates += expand_glob(word, cwd) or []
                for raw in dict.fromkeys(candidates):
                    if raw and os.path.lexists(os.path.join(cwd, os.path.expanduser(raw))):
                        out.append((raw, cwd))
        return out

    def _bash_part(self, part: CommandPart) -> tuple[Behavior, str | None, str, bool]:
        """(behavior, suggested rule, reason, allowed only as read-only) for one part,
        after deny/ask were checked."""
        view = part.views[part.allow_view]
        text = _show(part.argv)
        # An allow-list: any variable but a few harmless ones (`LC_ALL`, `NODE_ENV`...) may
        # change what the command runs (`MAKEFLAGS`, `RIPGREP_CONFIG_PATH`, `GIT_*`).
        unsafe_env = [n for n in part.env if dangerous_env(n) or not env_is_safe((n,))]
        if not unsafe_env and self.mode != "plan":
            rule = self._first(self.allow_rules, "Bash", lambda r: bash_rule_matches(r, view))
            risky = risky_option(part.argv) if rule is not None else None
            if rule is not None and risky is not None and rule.kind != "bash_exact":
                return "ask", None, f"{text}: {risky} writes files or runs programs", False
            if rule is not None:
                # A command that is read-only as well keeps the read-only tier: should the
                # classifier be wrong, the kernel still stops the write.
                read_only = part.allow_view == -1 and self._read_only_ok(part)
                return "allow", None, f"{text}: allowed by {_by(rule)}", read_only
        secret = self._reads_secret(part)
        if secret is not None:
            return "ask", None, f"{text} reads {secret}, which looks like a secrets file", False
        if part.allow_view == -1 and self._read_only_ok(part):
            return "allow", None, f"{text}: read-only command inside the project", True
        if unsafe_env:
            names = ", ".join(unsafe_env)
            return "ask", None, f"{text} sets {names}, which changes what runs", False
        behavior, why = modes.bash_fallback(self.mode)
        return behavior, suggest_bash_rule(view), f"{text}: {why}", False

    def _reads_secret(self, part: CommandPart) -> str | None:
        ro = classify(part.argv, (), part.globbed)
        for raw in ro.paths if ro is not None else ():
            for cwd in part.cwd or (self.cwd,):
                try:
                    path = self._resolve(raw, cwd)
                except PathError:
                    continue
                if is_secret(path) and self._path_rule(self.allow_rules, "Read", path) is None:
                    return self._shown(path)
        return None

    def _read_only_ok(self, part: CommandPart) -> bool:
        ro = classify(part.argv, part.env, part.globbed)
        if ro is None:
            return False
        if ro.git_content and self._denies_inside_project():
            return False  # history and diffs show a denied file's contents; ask
        paths = list(ro.paths)
        for pattern in ro.globs:
            if ".." in pattern.split("/") or secret_name_could_match(pattern):
                return False
            for cwd in part.cwd or (self.cwd,):
                matches = expand_glob(pattern, cwd)
                if matches is None:
                    return False  # too many matches, or a pattern bash reads differently
                paths += [str(cwd / m) for m in matches] or [_static_prefix(pattern)]
        for raw in paths:
            if not self._bash_path_readable(raw, part.cwd):
                return False
        if ro.recursive and not self.kernel_enforced:
            # Without the sandbox's masks, a tree walk would read what deny rules name.
            for raw in paths:
                if self._tree_holds_denied(raw, part.cwd):
                    return False
        return True

    def _denies_inside_project(self) -> bool:
        root = self.project_root
        return any(is_within(d, root) or is_within(root, d) for d in self._read_deny_dirs())

    def _tree_holds_denied(self, raw: str, cwds: tuple[Path, ...] | None) -> bool:
        for cwd in cwds or (self.cwd,):
            try:
                top = self._resolve(raw, cwd)
            except PathError:
                return True
            if any(is_within(d, top) or is_within(top, d) for d in self._read_deny_dirs()):
                return True
        return False

    def _read_deny_dirs(self) -> list[Path]:
        return self._deny_static_dirs(READ_FAMILY)

    def _deny_static_dirs(self, tools: frozenset[str]) -> list[Path]:
        """The deepest directory each deny rule of `tools` is confined to (`private/**` ->
        `<project>/private`; an unanchored `.env` -> its whole base). A bare `Read` deny
        rule (no path) confines nothing: `/`."""
        out: list[Path] = []
        for rule in self._deny:
            if rule.tool not in tools:
                continue
            if rule.kind == "tool":
                out.append(Path("/"))
                continue
            compiled = self._compiled.get(rule)
            if compiled is None:
                continue
            spec = rule.specifier or "**"
            pattern = spec[2:] if spec.startswith(("./", "~/")) else spec.lstrip("/")
            anchored = spec.startswith(("/", "./", "~/")) or "/" in spec.rstrip("/")
            static: list[str] = []
            if anchored and not spec.startswith("/"):
                for part in pattern.split("/"):
                    if not part or any(c in part for c in "*?[\\"):
                        break
                    static.append(part)
            out.append(compiled.base.joinpath(*static))
        return out

    def _bash_path_readable(self, raw: str, cwds: tuple[Path, ...] | None) -> bool:
        if DYN in raw:
            return False
        if cwds is None and not raw.startswith(("/", "~")):
            return False
        for cwd in cwds or (self.cwd,):
            try:
                path = self._resolve(raw, cwd)
            except PathError:
                return False
            if self._read_decision("Read", path).behavior != "allow":
                return False
        return True

    def _redirect_decision(self, raw: str, write: bool, cwd: Path | None) -> Decision:
        if cwd is None and not raw.startswith(("/", "~")):
            return Decision("ask", "the directory it runs in is not known")
        try:
            path = self._resolve(raw, cwd or self.cwd)
        except PathError as e:
            return Decision("ask", f"path refused: {e}")
        if write:
            return self._edit_decision("Write", path)
        return self._read_decision("Read", path)


# --- helpers ----------------------------------------------------------------------------


def _views(part: CommandPart) -> list[tuple[str, ...]]:
    """Every view of a part, plus `rm` for `/bin/rm`, so deny rules can't be dodged; and
    the `rm` a deleting command amounts to, so `Bash(rm:*)` also stops `git rm -f x`,
    `find . -delete`, `git clean -fdx` and `unlink x`."""
    out: list[tuple[str, ...]] = []
    for view in part.views:
        out.append(view)
        if view and "/" in view[0]:
            view = (view[0].rsplit("/", 1)[-1], *view[1:])
            out.append(view)
        deletion = _as_rm(view)
        if deletion is not None:
            out.append(deletion)
    return out


def _as_rm(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    if not argv:
        return None
    name, rest = argv[0], argv[1:]
    if name == "git":
        i = 0
        while i < len(rest) and rest[i].startswith("-"):
            i += 2 if rest[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
        sub, after = (rest[i], rest[i + 1 :]) if i < len(rest) else ("", ())
        if sub == "rm":
            return ("rm", *after)
        if sub == "clean" and any(w.startswith("-") and "f" in w for w in after):
            targets = [w for w in after if not w.startswith("-")]
            return ("rm", "-rf", *(targets or ["."]))
        return None
    if name == "find" and any(w in ("-delete", "-fdelete") for w in rest):
        starts = [w for w in rest if not w.startswith(("-", "(", "!"))][:1]
        return ("rm", "-rf", *(starts or ["."]))
    if name in ("unlink", "shred"):
        return ("rm", *[w for w in rest if not w.startswith("-")])
    return None


def _show(argv: tuple[str, ...]) -> str:
    return " ".join(shlex.quote(a.replace(DYN, "…")) if a else "''" for a in argv)


def _static_prefix(pattern: str) -> str:
    """The directory part of a glob before its first wildcard (`src/*/x` -> `src`)."""
    parts = pattern.split("/")
    static: list[str] = []
    for part in parts[:-1]:
        if any(c in part for c in "*?[{"):
            break
        static.append(part)
    if pattern.startswith("/") and not any(static):
        return "/"
    return "/".join(static) or "."


def _url_host(url: str) -> str | None:
    if any(c.isspace() or ord(c) < 0x20 or c == "\\" for c in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not host:
        return None
    host = host.rstrip(".").lower()
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    return host


_ORDER = {"allow": 0, "ask": 1, "deny": 2}


def _strictest(decisions: list[Decision]) -> Decision:
    return max(decisions, key=lambda d: _ORDER[d.behavior])


def _test_label(test: CallSpec) -> str:
    target = test.get("command") or test.get("path") or test.get("url") or ""
    return f"{test['tool']} {target}".strip()


def request_for_test(test: CallSpec) -> PermissionRequest:
    """The request a settings self-test (or `permissions check`) describes."""
    tool = test["tool"]
    tool_input: dict[str, Any] = dict(test.get("input") or {})
    if tool == "Bash":
        tool_input.setdefault("command", test.get("command", ""))
    elif tool in ("Grep", "Glob", "LS"):
        tool_input.setdefault("path", test.get("path", "."))
    elif tool in READ_FAMILY or tool in EDIT_FAMILY:
        tool_input.setdefault("file_path", test.get("path", ""))
    elif tool == "WebFetch":
        tool_input.setdefault("url", test.get("url", ""))
    return PermissionRequest(
        tool_name=tool,
        tool_input=tool_input,
        read_only=tool in READ_FAMILY or tool in ("WebFetch", "WebSearch"),
        needs_permission=tool not in AGENT_ONLY_TOOLS,
    )
