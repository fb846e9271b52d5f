"""Claude Code's settings files, read as settings layers with Claude Code's meaning.

A user who switches from Claude Code keeps `~/.claude/settings.json` (or
`$CLAUDE_CONFIG_DIR/settings.json`), `<project>/.claude/settings.json` and
`<project>/.claude/settings.local.json`. The keys aistack has a meaning for are translated
into aistack's own shape; every other key is left out and named in `ClaudeLayer.ignored`
(`aistack doctor` lists them), so a Claude-only key neither stops aistack nor passes for
applied.

What carries over, and how Claude Code's meaning differs from aistack's own files:
- `permissions.allow` / `ask` / `deny`. Path rules anchor differently: in Claude Code
  `Edit(/src/**)` is relative to the settings file's project and `Read(//etc/x)` is
  absolute, while aistack's own `/x` is absolute; they become `Edit(./src/**)` and
  `Read(/etc/x)`. `Read(./.env)`, `Read(*.env)` and `Read(~/.zshrc)` mean the same in both.
  Rules for tools aistack does not have, and the path forms Claude Code itself does not
  consult (`Glob(...)`, `Grep(...)`, `LS(...)`, `NotebookEdit(...)`), are left out. A
  specifier aistack cannot express on a tool it has (`Task(Explore)`, `Agent(x)`,
  `Skill(x)`) is left out of `allow` and widened to the bare tool in `ask` and `deny`, so
  the translation is never looser than the file. A malformed rule stays fatal.
- `permissions.defaultMode` (`default`, `acceptEdits`, `plan`, `bypassPermissions`) and
  `additionalDirectories`.
- `hooks` of the events aistack runs, with `type: "command"` entries; the rest are left
  out (they would never fire).
- `env`: variables for the session, its tools and hooks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLAUDE_DIR = ".claude"
TRANSLATED_KEYS = ("permissions", "hooks", "env")
QUIET_KEYS = frozenset({"$schema"})
"""Keys that carry no setting (an editor's schema hint): left out without a note."""
SUPPORTED_MODES = frozenset({"default", "acceptEdits", "plan", "bypassPermissions"})
PERMISSION_KEYS = frozenset({"allow", "ask", "deny", "defaultMode", "additionalDirectories"})
HOOK_EVENTS = (
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "Notification",
    "PreCompact", "SessionStart", "SessionEnd",
)
"""The events aistack runs (agent/hooks.py HOOK_EVENTS; settings may not import agent/)."""
PATH_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit"})
UNCONSULTED_PATH_TOOLS = frozenset({"Glob", "Grep", "LS", "NotebookEdit"})
"""Tools whose `Tool(path)` form Claude Code accepts but never consults."""
TOOL_ALIASES = {"Agent": "Task"}
"""Claude Code's newer names for tools aistack has under the older name."""
NO_SPECIFIER_TOOLS = frozenset({"Task", "Skill", "WebSearch", "TodoWrite"})
AISTACK_TOOLS = PATH_TOOLS | UNCONSULTED_PATH_TOOLS | NO_SPECIFIER_TOOLS | {
    "Bash", "WebFetch", "CodeSearch", "MemorySearch", "MemoryWrite", "PresentPlan",
}
_RULE_RE = re.compile(r"^(?P<tool>[A-Za-z][A-Za-z0-9_-]*)(?:\((?P<spec>.*)\))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ClaudeLayer:
    """One Claude Code settings file in aistack's shape, and what was not carried over."""

    data: dict[str, Any]
    ignored: tuple[str, ...] = ()


@dataclass(slots=True)
class _Notes:
    items: list[str] = field(default_factory=list[str])

    def add(self, text: str) -> None:
        self.items.append(text)


def claude_user_dir(env: Mapping[str, str]) -> Path:
    """`$CLAUDE_CONFIG_DIR` when set (Claude Code honours it), else `~/.claude`."""
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    home = env.get("HOME") or str(Path.home())
    return Path(home) / CLAUDE_DIR


def claude_user_settings_path(env: Mapping[str, str]) -> Path:
    return claude_user_dir(env) / "settings.json"


def claude_project_settings_path(project_root: Path) -> Path:
    return project_root / CLAUDE_DIR / "settings.json"


def claude_local_settings_path(project_root: Path) -> Path:
    return project_root / CLAUDE_DIR / "settings.local.json"


def translate_settings(raw: dict[str, Any]) -> ClaudeLayer:
    """The aistack layer for one Claude Code settings object, with notes on what was left
    out. Values of the wrong type are left out and noted too: Claude Code would not apply
    them either, and aistack's own validation would otherwise reject the whole file."""
    notes = _Notes()
    data: dict[str, Any] = {}
    for key, value in raw.items():
        if key in QUIET_KEYS:
            continue
        if key not in TRANSLATED_KEYS:
            notes.add(f"{key} (not an aistack setting)")
            continue
        if key == "permissions":
            perms = _permissions(value, notes)
            if perms:
                data["permissions"] = perms
        elif key == "hooks":
            hooks = _hooks(value, notes)
            if hooks:
                data["hooks"] = hooks
        else:
            env = _env(value, notes)
            if env:
                data["env"] = env
    return ClaudeLayer(data, tuple(notes.items))


def _permissions(value: Any, notes: _Notes) -> dict[str, Any]:
    if not isinstance(value, dict):
        notes.add("permissions (not an object)")
        return {}
    perms: dict[str, Any] = {}
    for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
        key = str(key)  # pyright: ignore[reportUnknownArgumentType]
        if key not in PERMISSION_KEYS:
            notes.add(f"permissions.{key} (not an aistack setting)")
        elif key == "defaultMode":
            if item in SUPPORTED_MODES:
                perms[key] = item
            else:
                notes.add(f"permissions.defaultMode {item!r} (aistack has no such mode)")
        elif not isinstance(item, list) or not all(isinstance(v, str) for v in item):  # pyright: ignore[reportUnknownVariableType]
            notes.add(f"permissions.{key} (not a list of strings)")
        elif key == "additionalDirectories":
            perms[key] = list(item)  # pyright: ignore[reportUnknownArgumentType]
        else:
            rules = [_rule(text, key, notes) for text in item]  # pyright: ignore[reportUnknownVariableType]
            perms[key] = [r for r in rules if r is not None]
    return perms


def translate_rule(text: str, kind: str) -> tuple[str | None, str | None]:
    """(the rule in aistack's form or None when left out, a note or None).

    `kind` is the list the rule is in (`allow`, `ask`, `deny`). Anything that does not look
    like `Tool` / `Tool(specifier)` is returned unchanged, so the rule parser rejects it
    with the file's name (a malformed rule is fatal in either dialect).
    """
    stripped = text.strip()
    if stripped.startswith("mcp__"):
        return stripped, None
    m = _RULE_RE.match(stripped)
    if m is None:
        return text, None
    tool, spec = m.group("tool"), m.group("spec")
    if tool in TOOL_ALIASES:
        alias = TOOL_ALIASES[tool]
        stripped = alias if spec is None else f"{alias}({spec})"
        tool = alias
    if tool not in AISTACK_TOOLS:
        return None, f"permissions.{kind} {text!r} (aistack has no {tool} tool)"
    if spec is None:
        return stripped, None
    spec = spec.strip()
    if tool in PATH_TOOLS:
        return f"{tool}({anchor_path(spec)})", None
    if tool in UNCONSULTED_PATH_TOOLS:
        why = f"Claude Code does not consult {tool}(path) rules either"
        return None, f"permissions.{kind} {text!r} ({why}; Read and Edit rules govern it)"
    if tool in NO_SPECIFIER_TOOLS:
        if kind == "allow":
            return None, f"permissions.allow {text!r} (aistack's {tool} takes no specifier)"
        return tool, f"permissions.{kind} {text!r} (applied to every {tool} call)"
    return stripped, None


def anchor_path(spec: str) -> str:
    """A Claude Code path pattern in aistack's form: `//x` is absolute (`/x` in aistack),
    `/x` is relative to the project (`./x`); `~/x`, `./x` and `x` mean the same in both."""
    if spec.startswith("//"):
        return "/" + spec.lstrip("/")
    if spec.startswith("/"):
        return "./" + spec.lstrip("/")
    return spec


def _rule(text: str, kind: str, notes: _Notes) -> str | None:
    rule, note = translate_rule(text, kind)
    if note:
        notes.add(note)
    return rule


def _hooks(value: Any, notes: _Notes) -> dict[str, Any]:
    """The hooks of the events aistack runs, command hooks only. A malformed entry of a
    known event is kept as written, so the hook parser reports it naming the file."""
    if not isinstance(value, dict):
        notes.add("hooks (not an object)")
        return {}
    out: dict[str, Any] = {}
    for event, groups in value.items():  # pyright: ignore[reportUnknownVariableType]
        event = str(event)  # pyright: ignore[reportUnknownArgumentType]
        if event not in HOOK_EVENTS:
            notes.add(f"hooks.{event} (aistack has no such hook event)")
            continue
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept: list[Any] = []
        for i, group in enumerate(groups):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            kept.append(_hook_group(group, f"hooks.{event}[{i}]", notes))
        out[event] = [g for g in kept if g is not None]
    return out


def _hook_group(group: Any, where: str, notes: _Notes) -> Any:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):  # pyright: ignore[reportUnknownMemberType]
        return group
    commands: list[Any] = []
    for j, hook in enumerate(group["hooks"]):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        kind = hook.get("type", "command") if isinstance(hook, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(kind, str) and kind != "command":
            notes.add(f"{where}.hooks[{j}] (type {kind!r}: aistack runs command hooks only)")
            continue
        commands.append(hook)
    if not commands:
        return None
    return {**group, "hooks": commands}


def _env(value: Any, notes: _Notes) -> dict[str, str]:
    if not isinstance(value, dict):
        notes.add("env (not an object)")
        return {}
    env: dict[str, str] = {}
    for name, item in value.items():  # pyright: ignore[reportUnknownVariableType]
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            env[str(name)] = str(item)  # pyright: ignore[reportUnknownArgumentType]
        else:
            notes.add(f"env.{name} (not a string)")
    return env
