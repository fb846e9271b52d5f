"""What each permission mode decides once no rule has (docs/permissions.md, "Modes").

- `default`: read-only tools inside the project and additional directories run; the rest asks.
- `acceptEdits`: also edits inside the project and additional directories; Bash still asks
  unless every part is a read-only command or allowed by a rule.
- `plan`: read-only tools and read-only commands only; edits, other commands and MCP tools
  are denied (reads outside the project still ask).
- `bypassPermissions`: everything runs, except deny rules, protected paths (`.git/`,
  `.aistack/`, shell start-up files), dangerous commands and anything the Bash analysis
  could not understand: those still ask.
- `dontAsk`: decides as `default` does, then denies whatever would ask (Claude Code's
  mode for unattended runs: only what allow rules pre-approve runs, and nobody is asked).
"""

from __future__ import annotations

from aistack_tui.permissions.types import (
    HEADLESS_MODES,
    PERMISSION_MODES,
    Behavior,
    Decision,
    PermissionMode,
)

MODE_LABELS: dict[PermissionMode, str] = {
    "default": "default",
    "acceptEdits": "accept edits",
    "plan": "plan (read-only)",
    "bypassPermissions": "bypass permissions",
    "dontAsk": "don't ask (deny what would ask)",
}


def parse_mode(value: str) -> PermissionMode:
    """The mode named `value`; ValueError (listing the modes) for anything else."""
    modes = (*PERMISSION_MODES, *HEADLESS_MODES)
    for mode in modes:
        if value == mode:
            return mode
    raise ValueError(
        f"unknown permission mode {value!r} (expected one of: {', '.join(modes)})"
    )


def never_ask(mode: PermissionMode, decision: Decision) -> Decision:
    """In `dontAsk` an `ask` becomes a deny, with the reason it would have asked."""
    if mode != "dontAsk" or decision.behavior != "ask":
        return decision
    return Decision("deny", f"mode dontAsk denies what would ask: {decision.reason}",
                    decision.rule, path=decision.path)


def next_mode(mode: PermissionMode, *, allow_bypass: bool = True) -> PermissionMode:
    """The mode Shift+Tab switches to; bypass is skipped unless the user enabled it."""
    cycle: list[PermissionMode] = [
        m for m in PERMISSION_MODES if allow_bypass or m != "bypassPermissions"
    ]
    if mode not in cycle:
        return cycle[0]
    return cycle[(cycle.index(mode) + 1) % len(cycle)]


def read_fallback(mode: PermissionMode, inside: bool) -> tuple[Behavior, str]:
    if mode == "bypassPermissions":
        return "allow", "mode bypassPermissions allows everything not denied"
    if inside:
        return "allow", f"mode {mode}: reads inside the project are allowed"
    return "ask", f"mode {mode}: reading outside the project needs approval"


def edit_fallback(mode: PermissionMode, inside: bool) -> tuple[Behavior, str]:
    if mode == "plan":
        return "deny", "mode plan: edits are not allowed while planning"
    if mode == "bypassPermissions":
        return "allow", "mode bypassPermissions allows everything not denied"
    if mode == "acceptEdits" and inside:
        return "allow", "mode acceptEdits: edits inside the project are allowed"
    if mode == "acceptEdits":
        return "ask", "mode acceptEdits: edits outside the project need approval"
    return "ask", "mode default: edits need approval"


def bash_fallback(mode: PermissionMode) -> tuple[Behavior, str]:
    """For a command part that no rule allowed and that is not read-only."""
    if mode == "plan":
        return "deny", "mode plan: only read-only commands run while planning"
    if mode == "bypassPermissions":
        return "allow", "mode bypassPermissions allows everything not denied"
    return "ask", f"mode {mode}: commands need approval"


def other_fallback(mode: PermissionMode, tool: str, read_only: bool) -> tuple[Behavior, str]:
    """WebFetch, MCP and any other tool with no rule."""
    if mode == "bypassPermissions":
        return "allow", "mode bypassPermissions allows everything not denied"
    if mode == "plan" and (tool.startswith("mcp__") or not read_only):
        return "deny", f"mode plan: {tool} is not allowed while planning"
    return "ask", f"mode {mode}: {tool} needs approval"
