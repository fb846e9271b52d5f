"""What `/permissions` shows: the live mode, every rule under the layer it came from, and
the session's grants, numbered so `/permissions revoke N` can take one back; and
`/permissions add`, which adds a rule to a layer (the dialog, or the whole rule typed).

Rules are read from the session each time (`LiveSession.permission_rules`), so the list is
what the engine enforces right now, not what the files say today.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from aistack_tui.permissions.types import Behavior
from aistack_tui.session.permission_views import RuleTarget
from aistack_tui.settings.layers import ConfigError

if TYPE_CHECKING:
    from aistack_tui.session.live import LiveSession, RuleView

BEHAVIORS = ("allow", "ask", "deny")
TARGETS = ("session", "local", "project", "user")
ADD_USAGE = ("Usage: /permissions add (a dialog), or /permissions add allow|ask|deny "
             "session|local|project|user RULE")

SCOPE_ORDER = (
    "user (Claude Code)", "user", "project (Claude Code)", "project",
    "local (Claude Code)", "local", "environment", "command line",
)
"""Lowest precedence first, as the layers load (a later layer's list adds to earlier)."""


def _where(source: str, project_root: Path) -> str:
    """A layer's source for reading: a project file relative to the project, a file in
    the home directory with `~`, anything else (a flag) as it is."""
    path = Path(source)
    if not path.is_absolute():
        return source
    for base, prefix in ((project_root, ""), (Path.home(), "~/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return source


def permissions_listing(session: LiveSession) -> str:
    views = session.permission_rules()
    lines = [f"Permission mode: {session.mode}  (Shift+Tab cycles)"]
    by_scope: dict[str, dict[str, list[RuleView]]] = {}
    for view in views:
        if view.scope != "session":
            by_scope.setdefault(view.scope, {}).setdefault(view.source, []).append(view)
    if not by_scope:
        lines.append("No rules in any settings file.")
    known = [s for s in SCOPE_ORDER if s in by_scope]
    for scope in known + [s for s in by_scope if s not in known]:
        for source, rules in by_scope[scope].items():
            lines.append(f"{scope} — {_where(source, session.project_root)}")
            lines += [f"  {v.behavior:5}  {v.rule}" for v in rules]
    grants = [v for v in views if v.scope == "session"]
    lines.append('session grants — "yes, don\'t ask again" answers, this session only')
    if not grants:
        lines.append("  none")
    lines += [f"  {i}  allow  {v.rule}" for i, v in enumerate(grants, 1)]
    lines.append("A deny rule wins over ask, ask over allow. "
                 "/permissions revoke N (or the rule) takes back a session grant.")
    return "\n".join(lines)


def revoke(session: LiveSession, which: str) -> tuple[str, bool]:
    """Take back the grant numbered `which` in the listing (or the grant whose rule is
    `which`); the message to show, and whether it worked."""
    grants = session.session_grants()
    rule = which
    if which.isdigit():
        index = int(which) - 1
        if not 0 <= index < len(grants):
            return f"There is no session grant {which} (see /permissions).", False
        rule = grants[index]
    if not session.revoke_grant(rule):
        return f"There is no session grant {rule} (see /permissions).", False
    return f"Revoked {rule}: the next matching call asks again.", True


def add_rule(session: LiveSession, args: str) -> tuple[str, bool]:
    """`/permissions add BEHAVIOR LAYER RULE` (the rule last: it may hold spaces); the
    message to show, and whether the rule was added."""
    behavior, _, rest = args.strip().partition(" ")
    layer, _, rule = rest.strip().partition(" ")
    if behavior not in BEHAVIORS or layer not in TARGETS or not rule.strip():
        return ADD_USAGE, False
    try:
        where = session.add_permission_rule(
            cast("Behavior", behavior), rule, cast("RuleTarget", layer))
    except ConfigError as e:
        return f"Not added: {e}", False
    return added_message(session, cast("Behavior", behavior), rule, where), True


def added_message(session: LiveSession, behavior: Behavior, rule: str, where: str) -> str:
    return (f"Added {behavior} {rule.strip()} to {_where(where, session.project_root)}; "
            "in force now.")
