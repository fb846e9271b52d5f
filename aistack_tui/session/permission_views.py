"""The permission engine as the user sees and changes it: the mode, the rules in force,
the session's grants, and what was denied or left out as untrusted.

Part of the session facade (`session/live.py`); front ends reach it through `LiveSession`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from aistack_tui.permissions.grants import append_rule
from aistack_tui.permissions.modes import parse_mode
from aistack_tui.permissions.rules import RuleError, parse_rule
from aistack_tui.settings.layers import (
    ConfigError,
    layer_scope,
    local_settings_path,
    project_settings_path,
    user_settings_path,
)

if TYPE_CHECKING:
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.permissions.types import Behavior, PermissionDenial, PermissionMode
    from aistack_tui.session.config import RunConfig
    from aistack_tui.settings.trust import TrustItem

RuleTarget: TypeAlias = Literal["session", "local", "project", "user"]
"""Where `/permissions add` puts a rule."""
SESSION_RULES = "this session"
"""The source of ask and deny rules added for the session only."""


@dataclass(frozen=True, slots=True)
class RuleView:
    """One permission rule as `/permissions` lists it."""

    behavior: Literal["allow", "ask", "deny"]
    rule: str
    source: str
    """The settings layer it came from, or "session grant"."""
    scope: str = ""
    """`user`, `project`, `local` (each maybe ` (Claude Code)`), `environment`,
    `command line`, or `session` for a grant."""


class PermissionViews:
    """Reads and changes of the session's permission engine, as values."""

    def __init__(
        self,
        *,
        agent: Agent,
        engine: PermissionEngine,
        config: RunConfig,
        untrusted: list[TrustItem],
    ) -> None:
        self.agent = agent
        self.engine = engine
        self.config = config
        self._untrusted = list(untrusted)

    @property
    def mode(self) -> PermissionMode:
        return self.engine.mode

    def set_mode(self, mode: str) -> PermissionMode:
        """Switch the permission mode; raises ValueError for a name that is not a mode."""

        parsed = parse_mode(mode)
        self.engine.mode = parsed
        self.config.permission_mode = parsed
        return parsed

    @property
    def denials(self) -> list[PermissionDenial]:
        return list(self.agent.runner.denials)

    @property
    def untrusted(self) -> list[TrustItem]:
        """What the project's files asked for that this session left out (not trusted)."""
        return list(self._untrusted)

    def permission_rules(self) -> list[RuleView]:
        """Every rule in force: each settings layer's, then the session's grants."""

        config = self.config
        views: list[RuleView] = []
        for layer in self.engine.layers:
            scope = "session rules" if layer.source == SESSION_RULES else layer_scope(
                layer.source, config.home, config.project_root, config.env)
            for behavior in ("deny", "ask", "allow"):
                for rule in getattr(layer, behavior):
                    views.append(RuleView(behavior, rule, layer.source, scope))
        views += [
            RuleView("allow", r, "session grant", "session") for r in self.session_grants()
        ]
        return views

    def session_grants(self) -> list[str]:
        return self.engine.session_grants()

    def add_permission_rule(self, behavior: Behavior, rule: str, layer: RuleTarget) -> str:
        """Add a rule (`/permissions add`) to `layer`, in force at once; returns where it
        went. A file layer's file is read and written back whole (other keys kept, as
        "yes and save" does); `session` lasts until the session ends. Raises ConfigError
        for a rule the settings loader would refuse, or a file that cannot be updated."""

        root, home = self.config.project_root, self.config.home
        paths = {"local": local_settings_path(root), "project": project_settings_path(root),
                 "user": user_settings_path(home)}
        try:
            if layer == "session":
                parse_rule(rule, SESSION_RULES)
                if behavior == "allow":
                    self.engine.grant_session(rule.strip())
                else:
                    self.engine.add_rule(behavior, rule.strip(), SESSION_RULES)
                return "this session"
            path = paths[layer]
            append_rule(path, rule.strip(), behavior)
            self.engine.add_rule(behavior, rule.strip(), str(path))
        except RuleError as e:
            raise ConfigError(str(e)) from e
        return str(path)

    def revoke_grant(self, rule: str) -> bool:
        """Forget a "don't ask again this session" rule; False if there was none."""
        return self.engine.revoke_session(rule)
