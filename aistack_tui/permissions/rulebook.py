"""The rules in force and the judgement of one path under them.

`Rulebook` holds what every check consults: the deny, ask and allow rules of all settings
layers and this session's grants (indexed per tool, path rules compiled once), the project
root, the extra directories, the home and the mode. It answers the two questions the
file tools and the Bash analysis both ask: may this resolved path be read, may it be
written. `PermissionEngine` is a Rulebook that also takes whole tool calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from aistack_tui.permissions import modes
from aistack_tui.permissions.paths import (
    PathError,
    is_secret,
    protected_reason,
    real,
    resolve_path,
    rule_path,
    within_any,
)
from aistack_tui.permissions.rules import (
    READ_FAMILY,
    CompiledPathRule,
    Rule,
    RuleLayer,
    compile_path_rule,
    parse_rule,
    rule_covers_tool,
)
from aistack_tui.permissions.types import Decision, PermissionMode


def by_rule(rule: Rule) -> str:
    """How a decision names the rule that made it."""
    return f"rule {rule.text} ({rule.source})"


class Rulebook:
    """The rules, roots and mode of one session. `mode` is mutable (Shift+Tab cycles it)."""

    mode: PermissionMode

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
    ) -> None:
        self.mode = mode
        self.project_root = real(project_root)
        self.home = real(home)
        self.additional_directories = [real(Path(d)) for d in additional_directories]
        self.extra_read_dirs = [real(Path(d)) for d in extra_read_dirs]
        self.cwd = real(cwd) if cwd is not None else self.project_root
        self.kernel_enforced = False
        """True once an OS sandbox confines every Bash command (set by the session): the
        parser may then leave tree walks to the sandbox's masks. Without it, it asks."""
        self.layers = list(layers)
        self.deny_rules: list[Rule] = []
        self.ask_rules: list[Rule] = []
        self._allow: list[Rule] = []
        for layer in self.layers:
            self.deny_rules += [parse_rule(t, layer.source) for t in layer.deny]
            self.ask_rules += [parse_rule(t, layer.source) for t in layer.ask]
            self._allow += [parse_rule(t, layer.source) for t in layer.allow]
        self._allow_all: list[Rule] = list(self._allow)
        self._index: dict[tuple[int, str], list[Rule]] = {}
        self._resolved: dict[tuple[str, Path], Path | PathError] = {}
        self._compiled: dict[Rule, CompiledPathRule] = {}
        for rule in (*self.deny_rules, *self.ask_rules, *self._allow):
            self._compile(rule)

    @property
    def allow_rules(self) -> list[Rule]:
        """The allow rules of every layer, then this session's grants."""
        return self._allow_all

    def _compile(self, rule: Rule) -> None:
        if rule.kind == "path" and rule not in self._compiled:
            self._compiled[rule] = compile_path_rule(rule, self.project_root, self.home)

    def resolve(self, raw: str, cwd: Path) -> Path:
        """`raw` resolved from `cwd`, cached for the check under way (`forget_paths`)."""
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

    def forget_paths(self) -> None:
        """Drop the resolutions of the last check, so a symlink changed since is seen."""
        self._resolved = {}

    def first(self, rules: list[Rule], tool: str, test: Callable[[Rule], bool]) -> Rule | None:
        """The first of `rules` that covers `tool` and passes `test`."""
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

    def path_rule(self, rules: list[Rule], tool: str, path: Path) -> Rule | None:
        """The first of `rules` for `tool` that covers the resolved `path`."""
        # `rules` must be one of the rulebook's own lists (never a copy): `first` indexes
        # them by identity, and a temporary list's id can be reused by the next one.
        def matches(rule: Rule) -> bool:
            if rule.kind == "tool":
                return True
            compiled = self._compiled.get(rule)
            return compiled is not None and compiled.matches(path)

        return self.first(rules, tool, matches)

    def _readable(self, path: Path) -> bool:
        return within_any(
            path, [self.project_root, *self.additional_directories, *self.extra_read_dirs]
        )

    def _writable(self, path: Path) -> bool:
        return within_any(path, [self.project_root, *self.additional_directories])

    def shown(self, path: Path) -> str:
        """A path as a person reads it in a reason: relative to the project or home."""
        return rule_path(path, self.project_root, self.home, tree=False) or str(path)

    def read_decision(self, tool: str, path: Path) -> Decision:
        """Whether `tool` may read the resolved `path`."""
        rule = self.path_rule(self.deny_rules, tool, path)
        if rule is not None:
            return Decision(
                "deny", f"reading {self.shown(path)} is denied by {by_rule(rule)}", rule.text
            )
        rule = self.path_rule(self.ask_rules, tool, path)
        if rule is not None:
            return Decision(
                "ask",
                f"{by_rule(rule)} asks before reading {self.shown(path)}",
                rule.text,
                suggested_rule=None,
            )
        rule = self.path_rule(self.allow_rules, tool, path)
        if rule is not None:
            return Decision("allow", f"allowed by {by_rule(rule)}", rule.text)
        if is_secret(path):
            spec = rule_path(path, self.project_root, self.home, tree=False)
            return Decision(
                "ask",
                f"{self.shown(path)} looks like a secrets file",
                suggested_rule=f"Read({spec})" if spec else None,
                warnings=(f"{self.shown(path)} may contain credentials",),
            )
        behavior, why = modes.read_fallback(self.mode, self._readable(path))
        suggested = None
        if behavior == "ask":
            spec = rule_path(
                path if path.is_dir() else path.parent, self.project_root, self.home, tree=True
            )
            suggested = f"Read({spec})" if spec else None
        return Decision(behavior, why, suggested_rule=suggested)

    def edit_decision(self, tool: str, path: Path) -> Decision:
        """Whether `tool` may write the resolved `path`."""
        rule = self.path_rule(self.deny_rules, tool, path)
        if rule is not None:
            return Decision(
                "deny", f"writing {self.shown(path)} is denied by {by_rule(rule)}", rule.text
            )
        protected = protected_reason(path, self.home)
        if protected is not None:
            return Decision("ask", f"{self.shown(path)}: {protected}", warnings=(protected,))
        rule = self.path_rule(self.ask_rules, tool, path)
        if rule is not None:
            return Decision(
                "ask", f"{by_rule(rule)} asks before writing {self.shown(path)}", rule.text
            )
        if self.mode == "plan":
            return Decision("deny", "mode plan: edits are not allowed while planning")
        rule = self.path_rule(self.allow_rules, tool, path)
        if rule is not None:
            return Decision("allow", f"allowed by {by_rule(rule)}", rule.text)
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

    def read_deny_dirs(self) -> list[Path]:
        """Where a Read deny rule can match (see `deny_static_dirs`)."""
        return self.deny_static_dirs(READ_FAMILY)

    def deny_static_dirs(self, tools: frozenset[str]) -> list[Path]:
        """The deepest directory each deny rule of `tools` is confined to (`private/**` ->
        `<project>/private`; an unanchored `.env` -> its whole base). A bare `Read` deny
        rule (no path) confines nothing: `/`."""
        out: list[Path] = []
        for rule in self.deny_rules:
            if rule.tool not in tools:
                continue
            if rule.kind == "tool":
                out.append(Path("/"))
                continue
            compiled = self._compiled.get(rule)
            if compiled is None:
                continue
            out.append(compiled.base.joinpath(*_static_parts(rule.specifier or "**")))
        return out


def _static_parts(spec: str) -> list[str]:
    """The directories an anchored rule pattern names before its first wildcard."""
    pattern = spec[2:] if spec.startswith(("./", "~/")) else spec.lstrip("/")
    anchored = spec.startswith(("/", "./", "~/")) or "/" in spec.rstrip("/")
    static: list[str] = []
    if anchored and not spec.startswith("/"):
        for part in pattern.split("/"):
            if not part or any(c in part for c in "*?[\\"):
                break
            static.append(part)
    return static


def static_prefix(pattern: str) -> str:
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
