"""Ports the host injects into the agent: human decisions and lifecycle hooks.

The TUI answers approvals with a modal dialog; print mode denies and records. The runtime
only awaits these protocols, so it never knows which front end it runs under.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from aistack_tui.llm.types import Message
from aistack_tui.permissions.types import Decision
from aistack_tui.tools.base import ToolCallDisplay

ApprovalKind = Literal["once", "session", "save", "reject"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A tool call the engine answered `ask` for; `display.diff` holds an edit's diff."""

    tool_use_id: str
    tool_name: str
    tool_input: dict[str, Any]
    decision: Decision
    display: ToolCallDisplay


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """once: run it; session: grant the rule for this session; save: also persist it to
    `.aistack/settings.local.json`; reject: don't run, sending `feedback` to the model."""

    kind: ApprovalKind
    feedback: str = ""
    updated_input: dict[str, Any] | None = None
    """Approved with this input instead of the model's (a client program's
    `updatedInput`): the runner checks it against the rules again and runs it."""

    @property
    def approved(self) -> bool:
        return self.kind != "reject"


class ApprovalHandler(Protocol):
    async def decide(self, request: ApprovalRequest) -> ApprovalDecision: ...


class DenyAll:
    """Print mode's approver: nobody is there to answer, so every ask is denied."""

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(
            "reject",
            "Permission was not granted: aistack runs non-interactively and this call "
            "needs approval. Allow it with --allowed-tools or a permissions rule.",
        )


class LifecycleHooks(Protocol):
    """A listener of the agent's lifecycle (`Agent(listeners=...)`): the session's
    recorder stores each completed message, checkpoints snapshot after tool results,
    memory writes after a finished answer."""

    async def on_message(self, message: Message) -> None: ...

    async def on_turn_end(self, turn: int) -> None: ...

    async def on_error(self, error: BaseException) -> None: ...
