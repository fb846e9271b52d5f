"""Permission rules: parse and validate `Tool` / `Tool(specifier)`, and match them.

Parsing is strict because a rule is a security setting: a typo in a deny rule that was
silently ignored would leave the door open, so anything malformed is a `RuleError` naming
the settings file and the rule. Matching is pure: Bash rules compare argument vectors
produced by `bash.py` (so `git:*` can never match `gitx`), path rules are gitignore globs
applied to already-resolved paths, domain rules compare host labels.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias, cast

import pathspec

from aistack_tui.json_values import as_list, as_object, as_str_list
from aistack_tui.permissions.paths import real
from aistack_tui.permissions.targets import EDIT_FAMILY, MCP_RESOURCE_TOOLS, READ_FAMILY
from aistack_tui.permissions.types import PERMISSION_MODES, SelfTest

RuleKind: TypeAlias = Literal[
    "tool", "bash_exact", "bash_prefix", "bash_glob", "path", "domain", "mcp", "resource"
]

AGENT_ONLY_TOOLS: frozenset[str] = frozenset(
    {"TodoWrite", "Skill", "Task", "PresentPlan", "CodeSearch", "MemorySearch", "MemoryWrite",
     "TaskOutput", "TaskStop"}
)
KNOWN_TOOLS: frozenset[str] = (
    READ_FAMILY | EDIT_FAMILY | AGENT_ONLY_TOOLS | MCP_RESOURCE_TOOLS
    | {"Bash", "WebFetch", "WebSearch"}
)
PATH_RULE_TOOLS: frozenset[str] = frozenset({"Read", "Edit", "Write", "MultiEdit"})

_RULE_RE = re.compile(r"^(?P<tool>[A-Za-z][A-Za-z0-9_-]*)(?:\((?P<spec>.*)\))?$", re.DOTALL)
_MCP_RE = re.compile(r"^mcp__[A-Za-z0-9_-]+?(?:__(?:[A-Za-z0-9_-]+|\*))?$")
_HOST_RE = re.compile(
    r"^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class RuleError(ValueError):
    """A malformed permission rule or settings entry; the message is one line naming the
    source (settings file or flag) and the rule."""

    def __init__(self, source: str, rule: str, why: str) -> None:
        self.source = source
        self.rule = rule
        self.why = why
        super().__init__(f"{source}: invalid permission rule {rule!r}: {why}")


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule. `tool` is the name as written; the matching helpers know families."""

    text: str
    tool: str
    kind: RuleKind
    source: str
    specifier: str | None = None
    tokens: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None


@dataclass(slots=True)
class RuleLayer:
    """The rules of one settings layer, as strings, plus its self-tests."""

    source: str
    allow: list[str] = field(default_factory=list[str])
    ask: list[str] = field(default_factory=list[str])
    deny: list[str] = field(default_factory=list[str])
    tests: list[SelfTest] = field(default_factory=list[SelfTest])


def _fail(source: str, text: str, why: str) -> RuleError:
    return RuleError(source, text, why)


def _bash_tokens(spec: str, source: str, text: str) -> tuple[str, ...]:
    try:
        tokens = tuple(shlex.split(spec, comments=False, posix=True))
    except ValueError as e:
        raise _fail(source, text, f"cannot split the command ({e})") from e
    if not tokens:
        raise _fail(source, text, "empty command")
    return tokens


def _bash_glob_regex(spec: str, source: str, text: str) -> re.Pattern[str]:
    """`npm run *`: `*` spans words; a trailing ` *` also matches the bare command."""
    placeholder = "\x01"
    tokens = _bash_tokens(spec.replace("*", placeholder), source, text)
    joined = " ".join(tokens)
    optional_tail = joined.endswith(" " + placeholder)
    if optional_tail:
        joined = joined[:-2]
    body = ".*".join(re.escape(piece) for piece in joined.split(placeholder))
    if optional_tail:
        body += "(?: .*)?"
    return re.compile(body, re.DOTALL)


def _parse_bash(text: str, spec: str, source: str) -> Rule:
    if spec.endswith(":*"):
        head = spec[:-2]
        if "*" in head or ":*" in head:
            raise _fail(source, text, "':*' may appear only once, at the end")
        tokens = _bash_tokens(head, source, text)
        return Rule(text, "Bash", "bash_prefix", source, spec, tokens=tokens)
    if ":*" in spec:
        raise _fail(source, text, "':*' must be at the end of the command")
    if "*" in spec:
        if spec.strip() == "*":
            return Rule(text, "Bash", "tool", source, None)
        return Rule(
            text, "Bash", "bash_glob", source, spec, pattern=_bash_glob_regex(spec, source, text)
        )
    return Rule(text, "Bash", "bash_exact", source, spec, tokens=_bash_tokens(spec, source, text))


def _parse_path(text: str, tool: str, spec: str, source: str) -> Rule:
    if spec.startswith("~") and not (spec == "~" or spec.startswith("~/")):
        raise _fail(source, text, "only '~/' (your home) is supported, not '~user'")
    try:
        pathspec.PathSpec.from_lines("gitwildmatch", [_pattern_part(spec)])
    except Exception as e:  # pathspec raises several types for bad globs
        raise _fail(source, text, f"bad glob ({e})") from e
    return Rule(text, tool, "path", source, spec)


def _parse_domain(text: str, spec: str, source: str) -> Rule:
    if not spec.startswith("domain:"):
        raise _fail(source, text, "WebFetch rules take 'domain:HOST'")
    host = spec[len("domain:") :].strip().lower().rstrip(".")
    if not _HOST_RE.match(host):
        raise _fail(source, text, f"{host!r} is not a host name (no scheme, port or path)")
    return Rule(text, "WebFetch", "domain", source, host)


_RESOURCE_RE = re.compile(r"^(?P<server>[A-Za-z0-9_-]+)(?::(?P<uri>.+))?$")


def _parse_resource(text: str, spec: str, source: str) -> Rule:
    """`ReadMcpResourceTool(server)` or `ReadMcpResourceTool(server:uri)`, where `*` in
    the URI matches anything (`github:repo://acme/*`)."""
    m = _RESOURCE_RE.match(spec)
    if m is None:
        raise _fail(source, text, "resource rules are 'ReadMcpResourceTool(server)' or "
                    "'ReadMcpResourceTool(server:uri)' (* in the uri matches anything)")
    uri = m.group("uri") or "*"
    pattern = re.compile("^" + ".*".join(re.escape(part) for part in uri.split("*")) + "$")
    return Rule(text, "ReadMcpResourceTool", "resource", source, m.group("server"),
                pattern=pattern)


def resource_rule_matches(rule: Rule, server: str, uri: str) -> bool:
    """A bare `ReadMcpResourceTool` rule matches every read; a specifier names a server
    and, optionally, its URIs."""
    if rule.kind != "resource":
        return True
    return rule.specifier == server and rule.pattern is not None and bool(
        rule.pattern.match(uri)
    )


def parse_rule(text: object, source: str) -> Rule:
    """Parse one rule string; raise RuleError (naming `source` and the rule) if malformed
    (settings files can hold anything, so a rule that is not a string is one too)."""
    if not isinstance(text, str):
        raise _fail(source, repr(text), "a rule must be a string")
    stripped = text.strip()
    if not stripped:
        raise _fail(source, text, "empty rule")
    if _CONTROL.search(stripped.replace("\t", " ")):
        raise _fail(source, text, "control characters are not allowed")
    if stripped.startswith("mcp__"):
        if not _MCP_RE.match(stripped):
            raise _fail(source, text, "MCP rules are 'mcp__server' or 'mcp__server__tool'")
        return Rule(stripped, stripped.removesuffix("__*"), "mcp", source)
    m = _RULE_RE.match(stripped)
    if m is None:
        raise _fail(source, text, "expected Tool or Tool(specifier)")
    tool, spec = m.group("tool"), m.group("spec")
    if tool not in KNOWN_TOOLS:
        raise _fail(source, text, f"unknown tool {tool!r}")
    if spec is None:
        return Rule(stripped, tool, "tool", source)
    if spec.count("(") != spec.count(")"):
        raise _fail(source, text, "unbalanced parentheses")
    spec = spec.strip()
    if not spec:
        raise _fail(source, text, "empty specifier (write the bare tool name instead)")
    if tool == "Bash":
        return _parse_bash(stripped, spec, source)
    if tool in PATH_RULE_TOOLS:
        return _parse_path(stripped, tool, spec, source)
    if tool == "WebFetch":
        return _parse_domain(stripped, spec, source)
    if tool == "ReadMcpResourceTool":
        return _parse_resource(stripped, spec, source)
    if tool in READ_FAMILY:
        raise _fail(source, text, f"{tool} takes no specifier; Read(...) rules govern it")
    raise _fail(source, text, f"{tool} takes no specifier")


def split_rule_list(values: list[str]) -> list[str]:
    """Split CLI rule lists: commas and whitespace outside parentheses separate rules."""
    rules: list[str] = []
    for value in values:
        depth = 0
        current: list[str] = []
        for ch in value:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (ch == "," or ch.isspace()):
                if current:
                    rules.append("".join(current))
                    current = []
                continue
            current.append(ch)
        if current:
            rules.append("".join(current))
    return rules


def _string_list(perms: dict[str, object], key: str, source: str) -> list[str]:
    value = perms.get(key, [])
    if value is None:
        return []
    strings = as_str_list(value)
    if strings is None:
        raise RuleError(source, f"permissions.{key}", "must be a list of strings")
    return list(strings)


_TEST_KEYS = frozenset({"tool", "command", "path", "url", "input", "expect", "mode"})


def _validate_test(test: object, source: str) -> SelfTest:
    label = f"permissions.tests entry {test!r}"
    fields = as_object(test)
    if fields is None:
        raise RuleError(source, label, "each test is an object")
    unknown = set(fields) - _TEST_KEYS
    if unknown:
        raise RuleError(source, label, f"unknown keys {sorted(unknown)}")
    tool = fields.get("tool")
    if not isinstance(tool, str):
        raise RuleError(source, label, "'tool' is required")
    if fields.get("expect") not in ("allow", "ask", "deny"):
        raise RuleError(source, label, "'expect' must be allow, ask or deny")
    mode = fields.get("mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise RuleError(source, label, f"unknown mode {mode!r}")
    if tool == "Bash" and not isinstance(fields.get("command"), str):
        raise RuleError(source, label, "a Bash test needs 'command'")
    for key in ("command", "path", "url"):
        if key in fields and not isinstance(fields[key], str):
            raise RuleError(source, label, f"'{key}' must be a string")
    if "input" in fields and as_object(fields["input"]) is None:
        raise RuleError(source, label, "'input' must be an object")
    # Every key is checked above, so the entry is a SelfTest now.
    return cast(SelfTest, dict(fields))


def layers_from_settings(layers: Sequence[tuple[str, object]]) -> list[RuleLayer]:
    """Validate the `permissions` dict of each settings layer into RuleLayers.

    Every rule is parsed here so a malformed one fails at load, naming its file.
    """
    result: list[RuleLayer] = []
    for source, raw in layers:
        perms = as_object({} if raw is None else raw)
        if perms is None:
            raise RuleError(source, "permissions", "must be an object")
        layer = RuleLayer(
            source=source,
            allow=_string_list(perms, "allow", source),
            ask=_string_list(perms, "ask", source),
            deny=_string_list(perms, "deny", source),
        )
        for text in (*layer.allow, *layer.ask, *layer.deny):
            parse_rule(text, source)
        tests = as_list(perms.get("tests", []))
        if tests is None:
            raise RuleError(source, "permissions.tests", "must be a list")
        layer.tests = [_validate_test(t, source) for t in tests]
        result.append(layer)
    return result


# --- matching ---------------------------------------------------------------------------


def rule_covers_tool(rule: Rule, tool_name: str) -> bool:
    """Whether `rule` is about `tool_name` at all (before looking at its specifier)."""
    if rule.kind == "mcp":
        return tool_name == rule.tool or tool_name.startswith(rule.tool + "__")
    if rule.tool == tool_name:
        return True
    if rule.tool == "Read":
        return tool_name in READ_FAMILY
    if rule.tool == "Edit":
        return tool_name in EDIT_FAMILY
    return False


def bash_rule_matches(rule: Rule, argv: tuple[str, ...]) -> bool:
    """Match a Bash rule against one simple command's argument vector.

    Dynamic words carry a NUL, which no rule contains, so they never equal a literal.
    """
    if rule.kind == "tool":
        return True
    if not argv:
        return False
    if rule.kind == "bash_exact":
        return argv == rule.tokens
    if rule.kind == "bash_prefix":
        n = len(rule.tokens)
        return len(argv) >= n and argv[:n] == rule.tokens
    if rule.kind == "bash_glob" and rule.pattern is not None:
        return rule.pattern.fullmatch(" ".join(argv)) is not None
    return False


def domain_rule_matches(rule: Rule, host: str) -> bool:
    """`domain:example.com` is that host; `domain:*.example.com` its subdomains."""
    if rule.kind == "tool":
        return True
    spec = rule.specifier or ""
    if spec.startswith("*."):
        want = spec[2:].split(".")
        labels = host.split(".")
        return len(labels) > len(want) and labels[-len(want) :] == want
    return host.split(".") == spec.split(".")


def _pattern_part(spec: str) -> str:
    if spec.startswith("~/"):
        return "/" + spec[2:]
    if spec == "~":
        return "/**"
    if spec.startswith("./"):
        return "/" + spec[2:]
    return spec


@dataclass(frozen=True, slots=True)
class CompiledPathRule:
    """A path rule bound to its base directory: gitignore matching relative to `base`."""

    rule: Rule
    base: Path
    spec: pathspec.PathSpec

    def matches(self, path: Path) -> bool:
        parts, base = path.parts, self.base.parts
        if parts[: len(base)] != base:
            return False
        rel = "/".join(parts[len(base) :])
        if not rel:
            return self.spec.match_file("")
        return self.spec.match_file(rel) or self.spec.match_file(rel + "/")


def compile_path_rule(rule: Rule, project_root: Path, home: Path) -> CompiledPathRule:
    """Bind `Read(./x)`/`Read(x)` to the project, `Read(~/x)` to home, `Read(/x)` and
    `Read(//x)` to `/`.

    For an absolute pattern the static directory before its first glob is resolved, so a
    rule written against a symlinked path still matches the resolved paths it is tested on.
    """
    spec = rule.specifier or "**"
    if spec.startswith("//"):
        spec = "/" + spec.lstrip("/")  # Claude Code's spelling of an absolute path
    if spec == "~" or spec.startswith("~/"):
        base, pattern = real(home), _pattern_part(spec)
    elif spec.startswith("/"):
        parts = spec.split("/")
        static: list[str] = []
        for part in parts[1:-1]:
            if any(c in part for c in "*?[") or part == "..":
                break
            static.append(part)
        base = real(Path("/" + "/".join(static)))
        pattern = "/" + "/".join(parts[1 + len(static) :])
    else:
        base, pattern = real(project_root), _pattern_part(spec)
    return CompiledPathRule(rule, base, pathspec.PathSpec.from_lines("gitwildmatch", [pattern]))
