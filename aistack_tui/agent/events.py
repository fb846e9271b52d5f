"""The agent's only output: a closed union of small, frozen events.

Front ends (the TUI, print mode) consume these and nothing else; they dispatch with
`match`. Events are past-tense nouns. Each is a slotted frozen dataclass: cheap to make
thousands of times per answer, and impossible to mutate by a consumer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from aistack_tui.llm.types import Message, ToolResultBlock, Usage
from aistack_tui.permissions.types import Decision
from aistack_tui.tools.base import ToolCallDisplay

EndReason: TypeAlias = Literal[
    "completed",  # the model answered without asking for tools
    "max_turns",
    "interrupted",
    "error",
    "budget",  # a hard limit: tokens, cost or wall time
    "tool_failures",  # too many tool calls failed in a row
    "stop_hook",
]


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """A model request is about to be made (turn numbers count model responses)."""

    turn: int
    provider: str
    model: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolInputDelta:
    """A piece of a tool call's JSON arguments as the model streams them (`partial_json`
    is empty for the piece that opens call `index` of the answer). The call itself comes
    whole with the finished message; this is for front ends that show it growing."""

    index: int
    tool_use_id: str
    name: str
    partial_json: str


@dataclass(frozen=True, slots=True)
class StreamReset:
    """The stream failed mid-way and is retried: discard the partial assistant text.

    `kind` is the error's class name (`OverloadedError`), `provider` and `status_code`
    where it came from, so a front end can say what happened in a sentence."""

    reason: str
    attempt: int
    delay: float
    kind: str = ""
    provider: str = ""
    status_code: int | None = None


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A complete message joined the conversation (user, assistant or tool results)."""

    message: Message


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    display: ToolCallDisplay


@dataclass(frozen=True, slots=True)
class PermissionAsked:
    tool_use_id: str
    name: str
    decision: Decision


@dataclass(frozen=True, slots=True)
class PermissionDecided:
    tool_use_id: str
    name: str
    behavior: Literal["allow", "deny"]
    reason: str
    input: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class ToolStarted:
    tool_use_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    tool_use_id: str
    name: str
    result: ToolResultBlock
    duration_s: float
    display: ToolCallDisplay | None = None


@dataclass(frozen=True, slots=True)
class UsageUpdated:
    """Token usage of the last model response, the session totals and the cost so far."""

    turn_usage: Usage
    session_usage: Usage
    turn_cost_usd: float | None
    session_cost_usd: float | None
    context_tokens: int
    context_window: int


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should see that is not part of the conversation."""

    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True, slots=True)
class ErrorOccurred:
    """A failure that ended the run (after retries); `kind` is the exception class name,
    `provider` and `status_code` say where it came from (empty when not a provider's)."""

    message: str
    kind: str
    retryable: bool = False
    provider: str = ""
    status_code: int | None = None


@dataclass(frozen=True, slots=True)
class SubagentEvent:
    """An event of a `Task` subagent, shown inside that call's card."""

    tool_use_id: str
    description: str
    event: AgentEvent


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """The run finished; always the last event."""

    reason: EndReason
    num_turns: int
    final_text: str
    usage: Usage
    cost_usd: float | None
    duration_ms: int
    duration_api_ms: int
    detail: str = ""
    """Why a limit stopped the run, in words for the user."""


AgentEvent: TypeAlias = (
    TurnStarted
    | TextDelta
    | ThinkingDelta
    | ToolInputDelta
    | StreamReset
    | MessageAdded
    | ToolCallRequested
    | PermissionAsked
    | PermissionDecided
    | ToolStarted
    | ToolFinished
    | UsageUpdated
    | Notice
    | ErrorOccurred
    | SubagentEvent
    | TurnEnded
)
