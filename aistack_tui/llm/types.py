"""Provider-neutral messages, content blocks, requests and stream events.

Content blocks use Anthropic's shapes (text, thinking, image, tool_use, tool_result)
because print mode's stream-json envelope is defined in those shapes and every adapter
must translate to and from them anyway. Messages are pydantic models so a session can be
stored as JSON and replayed to any provider; stream events are slotted dataclasses
because thousands of them pass per answer and they never leave the process.
"""

from __future__ import annotations

import operator
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class TextBlock(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(BaseModel):
    """Model reasoning; `signature` lets Anthropic verify it when it is sent back."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None


class ImageBlock(BaseModel):
    """An inline image, base64 encoded (what Read returns for a PNG or JPEG)."""

    type: Literal["image"] = "image"
    media_type: str
    data: str


class ToolUseBlock(BaseModel):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolResultBlock(BaseModel):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[TextBlock | ImageBlock] = ""
    is_error: bool = False

    def text(self) -> str:
        """The textual part of the result (images are described, not inlined)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(
            b.text if isinstance(b, TextBlock) else f"[image {b.media_type}]"
            for b in self.content
        )


ContentBlock: TypeAlias = Annotated[
    TextBlock | ThinkingBlock | ImageBlock | ToolUseBlock | ToolResultBlock,
    Field(discriminator="type"),
]

Role: TypeAlias = Literal["user", "assistant"]


class Usage(BaseModel):
    """Token counts in Anthropic's vocabulary; other providers are mapped onto it."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return self._combine(other, operator.add)

    def __sub__(self, other: Usage) -> Usage:
        """What was used since `other` was read off the same running total."""
        return self._combine(other, operator.sub)

    def _combine(self, other: Usage, op: Callable[[int, int], int]) -> Usage:
        # Field by field over the model's own fields, so a new counter is never forgotten.
        return Usage(**{
            name: op(getattr(self, name), getattr(other, name))
            for name in Usage.model_fields
        })


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex[:24]


class Message(BaseModel):
    """One conversation message.

    Assistant messages record the provider and model that produced them, so a session
    can switch models mid-way and replay its whole history to another provider.
    """

    role: Role
    content: list[ContentBlock]
    id: str = Field(default_factory=new_message_id)
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    created_at: float = Field(default_factory=time.time)
    kind: str | None = None
    """Agent-only marker (e.g. a compaction summary); never sent to a provider as such."""

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", content=[TextBlock(text=text)])


message_list_adapter: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


class ToolSpec(BaseModel):
    """What the model is told about one tool."""

    name: str
    description: str
    input_schema: dict[str, Any]


class LLMRequest(BaseModel):
    """Everything a provider needs for one model call."""

    system: str = ""
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list[ToolSpec])
    max_tokens: int = 8192
    temperature: float | None = None
    stop_sequences: list[str] = Field(default_factory=list)


StopReason: TypeAlias = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"
]


# --- stream events -------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class TextDelta:
    text: str


@dataclass(slots=True, frozen=True)
class ThinkingDelta:
    text: str


@dataclass(slots=True, frozen=True)
class ToolCallStarted:
    index: int
    id: str
    name: str


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    index: int
    partial_json: str


@dataclass(slots=True, frozen=True)
class ToolCallEnded:
    index: int
    id: str
    name: str
    input: dict[str, Any]


@dataclass(slots=True, frozen=True)
class UsageReported:
    usage: Usage


@dataclass(slots=True, frozen=True)
class StreamRetrying:
    """The stream failed and will be retried; consumers discard the partial message."""

    error: Exception
    attempt: int
    delay: float


@dataclass(slots=True, frozen=True)
class StreamDone:
    """The complete assistant message; always the last event of a successful stream."""

    message: Message
    stop_reason: str = "end_turn"
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


StreamEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallEnded
    | UsageReported
    | StreamRetrying
    | StreamDone
)
