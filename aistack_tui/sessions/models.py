"""Plain records the session store returns: what a session is, and a search hit.

They are dataclasses rather than pydantic models because they never cross a process
boundary as JSON; the store builds them from rows and front ends only read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aistack_tui.llm.types import Usage


class SessionError(Exception):
    """A session operation could not be done; the message says why (shown to users)."""


class SessionNotFoundError(SessionError):
    """No session has this id."""


class AmbiguousSessionIdError(SessionError):
    """An id prefix matches more than one session; `candidates` lists them."""

    def __init__(self, prefix: str, candidates: list[str]) -> None:
        self.prefix = prefix
        self.candidates = candidates
        shown = ", ".join(candidates[:5]) + (" …" if len(candidates) > 5 else "")
        super().__init__(
            f"session id prefix {prefix!r} is ambiguous ({len(candidates)} sessions: {shown}); "
            "type more characters"
        )


@dataclass(slots=True)
class SessionInfo:
    """One session's metadata and running totals (not its messages)."""

    id: str
    project_root: str
    created_at: float
    updated_at: float
    """When the last message was appended (creation or fork time before that)."""
    title: str
    model: str
    """The model of the most recent `record_usage` (or the one given at creation)."""
    message_count: int
    parent_id: str | None = None
    """The session this one was forked from."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    """Sum of the known costs; calls whose cost was unknown add nothing."""

    @property
    def usage(self) -> Usage:
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens,
        )


@dataclass(slots=True, frozen=True)
class SearchHit:
    """One message matching a full-text search, best first."""

    session_id: str
    message_id: str
    snippet: str
    """A short excerpt with matches wrapped in `[` `]`."""
    rank: float
    """FTS5 bm25: lower (more negative) is a better match."""
    role: str = ""
    created_at: float = 0.0
    session_title: str = field(default="")
