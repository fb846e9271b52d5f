"""What travels on the message bus: inbound (a channel to a session) and outbound (a
session to its channel). Plain frozen values with nothing channel-specific in them, so
the bus never knows whether an editor, a chat bot or a test is on the other end.

Every message carries the channel's `key` for the conversation (an ACP session id, a
Telegram chat id): a channel holds many sessions and tells them apart by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from aistack_tui.agent.events import AgentEvent
from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.permissions.types import PermissionMode

if TYPE_CHECKING:
    from aistack_tui.llm.types import ContentBlock

Prompt: TypeAlias = "str | list[ContentBlock]"


@dataclass(frozen=True, slots=True)
class OpenRequest:
    """How a channel wants a session opened: where, and optionally which stored session to
    resume, which model and which permission mode, more directories its tools may reach
    (an editor's extra workspace folders) and MCP servers to start for it (an editor's
    own, as `.mcp.json` entries by name)."""

    cwd: Path
    resume: str | None = None
    model: str | None = None
    mode: PermissionMode | None = None
    additional_directories: tuple[str, ...] = ()
    mcp_servers: Mapping[str, Any] = field(default_factory=dict[str, Any])


# ----------------------------------------------------------------------------- inbound


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A prompt. While a turn runs it is queued and sent when the turn ends."""

    key: str
    prompt: Prompt


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """The person's answer to an `ApprovalNeeded` with the same `request_id`."""

    key: str
    request_id: str
    decision: ApprovalDecision


ControlAction: TypeAlias = Literal["stop", "new", "mode", "model", "resume"]


@dataclass(frozen=True, slots=True)
class Control:
    """stop: interrupt the turn (pending approvals are refused); new: a fresh
    conversation; mode / model / resume: switch to `value`."""

    key: str
    action: ControlAction
    value: str = ""


Inbound: TypeAlias = UserMessage | ApprovalAnswer | Control


# ---------------------------------------------------------------------------- outbound


@dataclass(frozen=True, slots=True)
class AgentOutput:
    """One agent event of the session's running turn, in order."""

    key: str
    event: AgentEvent


@dataclass(frozen=True, slots=True)
class ApprovalNeeded:
    """The session waits for the person: answer with `ApprovalAnswer(request_id=...)`."""

    key: str
    request_id: str
    request: ApprovalRequest


@dataclass(frozen=True, slots=True)
class ApprovalClosed:
    """The request is settled; `withdrawn` when nobody answered (the turn was stopped),
    so a channel can take its buttons away."""

    key: str
    request_id: str
    approved: bool
    withdrawn: bool = False


@dataclass(frozen=True, slots=True)
class MessageQueued:
    """A message arrived while a turn ran; it is sent when the turn ends."""

    key: str
    text: str


Outbound: TypeAlias = AgentOutput | ApprovalNeeded | ApprovalClosed | MessageQueued


@dataclass(frozen=True, slots=True)
class ControlResult:
    """The answer to a `Control`: what happened, in words a channel can show."""

    key: str
    action: ControlAction
    ok: bool
    text: str
