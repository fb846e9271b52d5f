"""What memory stores and returns: records, search hits, the layers, and errors.

Plain dataclasses (like the sessions store's records): they are built from rows and read
by front ends, tools and the context block, and cross a process boundary only through
`to_json` (export / import).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeAlias

Kind: TypeAlias = Literal["profile", "semantic", "episodic"]
"""The three layers kept as individual memories. The other two layers (task state and the
rolling summary) are one text each and live in `memory_state`."""

KINDS: tuple[Kind, ...] = ("profile", "semantic", "episodic")
USER_SCOPE = ""
"""The `project` value of memories that belong to the user everywhere (profile facts)."""


class MemoryOperationError(ValueError):
    """A memory operation failed; the message is meant for users and the model.

    A ValueError, so layers that do not import memory (tools) can catch it as bad input.
    """


class MemoryNotFoundError(MemoryOperationError):
    """No memory has this id."""


def parse_kind(value: str) -> Kind:
    """Validate a kind given by a user or a model; raises with the allowed values."""
    lowered = value.strip().lower()
    for kind in KINDS:
        if lowered == kind:
            return kind
    raise MemoryOperationError(f"unknown memory kind {value!r}: use one of {', '.join(KINDS)}")


@dataclass(slots=True)
class MemoryRecord:
    """One remembered item with its provenance."""

    id: int
    kind: Kind
    content: str
    project: str
    """The resolved project root, or "" for a user-wide memory."""
    source: str
    """Who wrote it: `user`, `model`, `policy:<rule>`, `tool:<name>`, `import`, `cli`."""
    session_id: str | None
    message_id: str | None
    importance: float
    pinned: bool
    created_at: float
    updated_at: float
    times_seen: int = 1
    """How often the same fact was written; near-duplicates merge and bump this."""
    embedder: str | None = None
    """The embedder of the stored vector (None until it is embedded)."""

    @property
    def label(self) -> str:
        return f"m{self.id}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("embedder", None)
        return data

    def when(self) -> str:
        return dt.datetime.fromtimestamp(self.created_at).strftime("%Y-%m-%d")


@dataclass(slots=True)
class MemoryHit:
    """One search result: a memory, or a message of a past session."""

    origin: Literal["memory", "session"]
    text: str
    score: float
    """Fused score (RRF weighted by recency and importance): higher is better."""
    record: MemoryRecord | None = None
    session_id: str | None = None
    message_id: str | None = None
    role: str = ""
    created_at: float = 0.0
    session_title: str = ""
    similarity: float | None = None
    """Cosine similarity of the vectors (None when the vector side did not find it)."""
    lexical_rank: int | None = None
    """1-based position in the bm25 list (None when full-text search did not find it)."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        if self.record is not None:
            return self.record.label
        return f"session {(self.session_id or '')[:8]}"
