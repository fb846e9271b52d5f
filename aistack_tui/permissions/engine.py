"""The permission engine: rules, then guardrails, then the mode, for every tool call.

Precedence is deny > ask > allow > mode, across all settings layers and session grants.
Every path is resolved before it is compared, every Bash command is split by `bash.py`
and each part must be allowed on its own (`bash_check.py`), and any failure inside the
engine becomes "ask" (never "allow"). Each Decision says in words which rule or mode
decided. The engine judges what a call touches (`targets.py`), never the tool's raw input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, assert_never, cast
from urllib.parse import urlsplit

from aistack_tui.permissions import modes
from aistack_tui.permissions.bash_check import BashCheck
from aistack_tui.permissions.grants import SessionGrants, append_allow_rule
from aistack_tui.permissions.paths import PathError, is_secret, is_within, resolve_path
from aistack_tui.permissions.rulebook import Rulebook, by_rule, static_prefix
from aistack_tui.permissions.rules import (
    AGENT_ONLY_TOOLS,
    EDIT_FAMILY,
    READ_FAMILY,
    Rule,
    RuleError,
    RuleLayer,
    domain_rule_matches,
    parse_rule,
    resource_rule_matches,
)
from aistack_tui.permissions.targets import (
    McpResourceRead,
    PathRead,
    PathWrite,
    ShellCommand,
    UnusableInput,
    UrlFetch,
    WholeTool,
    target_from_input,
)
from aistack_tui.permissions.types import (
    Behavior,
    CallSpec,
    Decision,
    ExecTier,
    PermissionMode,
    PermissionRequest,
)


class PermissionEngine(Rulebook):
    """Implements `PermissionChecker`. `mode` is mutable (Shift+Tab cycles it)."""

    mode: PermissionMode  # declared again: the self-tests below assign it

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
        super().__init__(
            layers=layers,
            mode=mode,
            project_root=project_root,
            home=home,
            additional_directories=additional_directories,
            extra_read_dirs=extra_read_dirs,
            cwd=cwd,
        )
        self._deny_dirs_cache: dict[str, list[Path]] = {}
        self.local_settings_path = local_settings_path or (
            Path(project_root) / ".aistack" / "settings.local.json"
        )
        self._grants = SessionGrants()
        self._bash = BashCheck(self)
        if self_test:
            failures = self.run_self_tests()
            if failures:
                source, test, why = failures[0]
                raise RuleError(source, f"permissions.tests {test}", why)

    # --- the PermissionChecker protocol -------------------------------------------------

    def check(self, request: PermissionRequest) -> Decision:
        # Paths are resolved several times per Bash command (deny, secrets, read-only
        # checks); the cache lives for one check only, so a symlink changed later is seen.
        self.forget_paths()
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
        {"deny": self.deny_rules, "ask": self.ask_rules, "allow": self._allow}[behavior].append(
            rule
        )
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
        if self._under_deny_dirs(path, "Read") and self.path_rule(self.deny_rules, "Read", path):
            return True
        return (
            tier == "read"
            and is_secret(path)
            and self.path_rule(self.allow_rules, "Read", path) is None
        )

    def frozen_for_commands(self, path: Path) -> bool:
        """Whether an Edit deny rule keeps `path` read-only for commands allowed to write."""
        return self._under_deny_dirs(path, "Edit") and (
            self.path_rule(self.deny_rules, "Edit", path) is not None
        )

    def _under_deny_dirs(self, path: Path, family: str) -> bool:
        """A cheap first test for the sandbox's walk over every file of the project: can any
        deny rule of this family match below where `path` is?"""
        dirs = self._deny_dirs_cache.get(family)
        if dirs is None:
            tools = READ_FAMILY if family == "Read" else EDIT_FAMILY
            dirs = self._deny_dirs_cache[family] = self.deny_static_dirs(tools)
        return any(is_within(path, d) for d in dirs)

    def denied_roots(self) -> list[Path]:
        """The directories below which a deny rule can match (where the sandbox looks, also
        inside directories it skips when it looks for secrets, such as node_modules)."""
        return list(dict.fromkeys(self.deny_static_dirs(READ_FAMILY | EDIT_FAMILY)))

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

    # --- one call, by what it touches ----------------------------------------------------

    def _check(self, request: PermissionRequest) -> Decision:
        tool = request.tool_name
        tool_input = request.tool_input
        # Typed as a dict, but built from what a model or a hook sent: anything else asks
        # instead of failing somewhere below.
        if not isinstance(cast(object, tool_input), dict):
            return Decision("ask", "the tool input is not an object")
        if not request.needs_permission or tool in AGENT_ONLY_TOOLS:
            rule = self.first(self.deny_rules, tool, lambda r: r.kind in ("tool", "mcp"))
            if rule is not None:
                return Decision("deny", f"denied by {by_rule(rule)}", rule.text)
            return Decision("allow", f"{tool} acts only inside the agent")
        target = request.target
        if target is None:
            target = target_from_input(tool, tool_input)
        match target:
            case ShellCommand(command):
                return self._bash.decide(command, request.cwd)
            case PathRead():
                return self._check_read(tool, target)
            case PathWrite(raw):
                try:
                    path = resolve_path(raw, self.cwd, self.home)
                except PathError as e:
                    return Decision("ask", f"path refused: {e}")
                # The tool writes this resolved file or nothing (tools/file_target.py).
                return replace(self.edit_decision(tool, path), path=path)
            case UrlFetch(url):
                return self._check_fetch(url, request.read_only)
            case McpResourceRead(server, uri):
                return self._check_mcp_resource(tool, server, uri)
            case WholeTool():
                return self._check_other(tool, request.read_only)
            case UnusableInput(reason):
                return Decision("ask", reason)
            case _:
                assert_never(target)

    def _check_read(self, tool: str, target: PathRead) -> Decision:
        pattern = target.pattern
        try:
            paths = [resolve_path(target.path, self.cwd, self.home)]
            if pattern is not None and (
                pattern.startswith(("/", "~")) or ".." in pattern.split("/")
            ):
                paths.append(resolve_path(static_prefix(pattern), paths[0], self.home))
        except PathError as e:
            return Decision("ask", f"path refused: {e}")
        decision = _strictest([self.read_decision(tool, p) for p in paths])
        # Read opens this resolved file or nothing (tools/file_target.py).
        return replace(decision, path=paths[0]) if target.opens else decision

    # web and other tools

    def _check_fetch(self, url: str, read_only: bool) -> Decision:
        if not url:
            return Decision("ask", "WebFetch was called without a URL")
        host = _url_host(url)
        if host is None:
            return Decision(
                "ask", f"cannot tell which host {url[:200]!r} reaches", warnings=("unusual URL",)
            )

        def matches(rule: Rule) -> bool:
            return domain_rule_matches(rule, host)

        rule = self.first(self.deny_rules, "WebFetch", matches)
        if rule is not None:
            return Decision("deny", f"fetching {host} is denied by {by_rule(rule)}", rule.text)
        rule = self.first(self.ask_rules, "WebFetch", matches)
        if rule is not None:
            return Decision(
                "ask", f"{by_rule(rule)} asks before fetching {host}", rule.text,
                suggested_rule=None,
            )
        rule = self.first(self.allow_rules, "WebFetch", matches)
        if rule is not None:
            return Decision("allow", f"allowed by {by_rule(rule)}", rule.text)
        behavior, why = modes.other_fallback(self.mode, "WebFetch", read_only)
        return Decision(behavior, why, suggested_rule=f"WebFetch(domain:{host})")

    def _check_mcp_resource(self, tool: str, server: str, uri: str) -> Decision:
        """Reading a server's resources: the tool's own rules (`ReadMcpResourceTool`,
        `ReadMcpResourceTool(github:repo://acme/*)`) and the server's rule (`mcp__github`
        denies or allows its resources as it does its tools) decide; with no rule it is
        allowed in every mode, since a read changes nothing."""
        names = [tool] + ([f"mcp__{server}"] if server else [])

        def bare(rule: Rule) -> bool:
            if rule.kind == "resource":
                return resource_rule_matches(rule, server, uri)
            return rule.kind in ("tool", "mcp")

        checks: tuple[tuple[list[Rule], Behavior, str], ...] = (
            (self.deny_rules, "deny", "denied"), (self.ask_rules, "ask", "asked for"),
            (self.allow_rules, "allow", "allowed"),
        )
        for rules, behavior, verb in checks:
            for name in names:
                rule = self.first(rules, name, bare)
                if rule is not None:
                    return Decision(behavior, f"{verb} by {by_rule(rule)}", rule.text)
        return Decision("allow", "reading an MCP server's resources changes nothing")

    def _check_other(self, tool: str, read_only: bool) -> Decision:
        def bare(rule: Rule) -> bool:
            return rule.kind in ("tool", "mcp")

        rule = self.first(self.deny_rules, tool, bare)
        if rule is not None:
            return Decision("deny", f"denied by {by_rule(rule)}", rule.text)
        rule = self.first(self.ask_rules, tool, bare)
        if rule is not None:
            return Decision("ask", f"{by_rule(rule)} asks before {tool}", rule.text)
        rule = self.first(self.allow_rules, tool, bare)
        if rule is not None:
            return Decision("allow", f"allowed by {by_rule(rule)}", rule.text)
        behavior, why = modes.other_fallback(self.mode, tool, read_only)
        return Decision(behavior, why, suggested_rule=tool)


# --- helpers ----------------------------------------------------------------------------


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
