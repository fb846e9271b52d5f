"""The data the permission engine takes and returns: pure values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, Required, TypeAlias, TypedDict

from aistack_tui.permissions.targets import PermissionTarget

Behavior: TypeAlias = Literal["allow", "ask", "deny"]
PermissionMode: TypeAlias = Literal[
    "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"
]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
)
"""The modes a person cycles through (Shift+Tab, `/mode`)."""
HEADLESS_MODES: tuple[PermissionMode, ...] = ("dontAsk",)
"""Modes for runs nobody watches, chosen by flag, setting or a client's request only:
`dontAsk` denies whatever would ask (Claude Code's mode of that name)."""


class CallSpec(TypedDict, total=False):
    """A tool call in settings terms, as `permissions.tests` entries and `aistack
    permissions check` write it: `input` is the tool input, and `command` (Bash), `path`
    (file tools) or `url` (WebFetch) fill the usual key of it."""

    tool: Required[str]
    command: str
    path: str
    url: str
    input: dict[str, Any]


class SelfTest(CallSpec, total=False):
    """One `permissions.tests` entry: a call and the decision it must get (in `mode`)."""

    expect: Required[Behavior]
    mode: PermissionMode


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """One tool call as the engine sees it.

    `read_only` and `needs_permission` come from the tool's class; `tool_input` is the
    validated input the model sent (for Bash the `command`, for file tools `file_path`
    or `path`, for WebFetch `url`), which approvals show. `target` is what the call
    touches, as the tool declared it from its validated arguments; None: the engine
    reads it from `tool_name` and `tool_input` (`targets.target_from_input`).
    """

    tool_name: str
    tool_input: dict[str, Any]
    read_only: bool = False
    needs_permission: bool = True
    cwd: Path | None = None
    """Where a Bash command will run (the directory earlier calls `cd`-ed to)."""
    target: PermissionTarget | None = None


ExecTier: TypeAlias = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class ExecGrant:
    """What the kernel lets an allowed Bash command do (the sandbox under the engine).

    `read`: the whole file system read-only, a private /tmp, denied paths and secrets
    masked; for commands the engine allowed only because it judged them read-only.
    `write`: the project and temp dirs writable except protected paths; for commands a
    rule, the mode or the user allowed. `network` only when the command was allowed for
    it (a rule, the user's yes, bypassPermissions), never for the read-only judgement.
    """

    tier: ExecTier
    network: bool
    git: bool = False
    """The command runs git itself: on the write tier git's objects, refs and index are
    writable for it (never its config, hooks, info/, commondir or worktree and submodule
    admin files); every other command finds the repository's metadata read-only."""

    def approved(self) -> ExecGrant:
        """What the same command gets once the user says yes: the write tier and the
        network, and git's metadata only for a command that runs git."""
        return ExecGrant("write", network=True, git=self.git)


READ_ONLY_GRANT = ExecGrant("read", network=False)
APPROVED_GRANT = ExecGrant("write", network=True)


@dataclass(frozen=True, slots=True)
class Decision:
    """The engine's answer, with the reason a person can read.

    `rule` is the rule that decided (None when the mode did); `suggested_rule` is what
    "yes, don't ask again" grants or saves; `warnings` are shown in the confirm dialog
    (dangerous command, secret file...); `parts` is how a compound Bash command was split;
    `grant` is what an allowed Bash command may do inside the sandbox (None: the user's
    approval decides, which grants `APPROVED_GRANT`); `path` is the resolved file a decision
    about Read or an edit judged, which the tool must then open and nothing else.
    """

    behavior: Behavior
    reason: str
    rule: str | None = None
    suggested_rule: str | None = None
    warnings: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()
    grant: ExecGrant | None = None
    path: Path | None = None


class PermissionChecker(Protocol):
    """What the agent loop asks before every tool call (the seam the engine fills)."""

    mode: PermissionMode

    def check(self, request: PermissionRequest) -> Decision: ...

    def grant_session(self, rule: str) -> None:
        """Allow `rule` for the rest of this session ("yes, don't ask again")."""
        ...

    def save_rule(self, rule: str) -> None:
        """Append `rule` to the project's `.aistack/settings.local.json` allow list."""
        ...


@dataclass(slots=True)
class PermissionDenial:
    """A denied call as print mode reports it in `permission_denials`."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any] = field(default_factory=dict[str, Any])
    reason: str = ""
