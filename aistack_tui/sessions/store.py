"""The session storage port the agent and front ends talk to.

It is a Protocol so the SQLite implementation can later be swapped for a PostgreSQL one
(a team sharing sessions) without touching the agent (AGENTS.md, the architecture map).
Implementations must persist each appended message before returning, so a crash loses at
most the message in flight.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Protocol, runtime_checkable

from aistack_tui.llm.types import Message, Usage
from aistack_tui.sessions.models import SearchHit, SessionInfo


@runtime_checkable
class SessionStore(Protocol):
    async def create(
        self, project_root: Path, model: str, *, title: str = "", parent_id: str | None = None,
        session_id: str | None = None,
    ) -> SessionInfo:
        """Start an empty session for a project (under `session_id` when given)."""
        ...

    async def append(self, session_id: str, message: Message) -> None:
        """Persist one message at the end of the session, committed before returning.

        Appending a message whose id the session already has is a no-op, so a retried
        persist never duplicates history. Raises SessionNotFoundError for an unknown id.
        """
        ...

    async def messages(self, session_id: str) -> builtins.list[Message]:
        """The session's messages in the order they were appended."""
        ...

    async def get(self, session_id: str) -> SessionInfo | None:
        """A session by id or by a unique id prefix; None when nothing matches.

        Raises AmbiguousSessionIdError when a prefix matches several sessions.
        """
        ...

    async def latest(self, project_root: Path) -> SessionInfo | None:
        """The project's session with the most recently appended message, crashed or not."""
        ...

    async def list(
        self, project_root: Path | None = None, limit: int = 50
    ) -> builtins.list[SessionInfo]:
        """Sessions, most recently active first; all projects when `project_root` is None."""
        ...

    async def fork(self, session_id: str, new_id: str | None = None) -> SessionInfo:
        """A new session (`new_id` or a fresh id, `parent_id` set) holding a copy of the
        history."""
        ...

    async def truncate(self, session_id: str, from_message_id: str) -> int:
        """Delete message `from_message_id` and every later one of the session, atomically.

        This is how a rewind cuts the stored conversation, so resuming the session later
        does not bring the rewound turns back; search stops finding the deleted text.
        Returns how many messages were deleted: 0, changing nothing, when the session has
        no message with that id. Usage totals and the title are kept (the tokens were
        spent). Raises SessionNotFoundError for an unknown session id.
        """
        ...

    async def record_usage(
        self, session_id: str, usage: Usage, cost_usd: float | None, model: str
    ) -> None:
        """Add one model call's tokens and cost to the session totals."""
        ...

    async def set_title(self, session_id: str, title: str) -> None: ...

    async def search(
        self, query: str, project_root: Path | None = None, limit: int = 20
    ) -> builtins.list[SearchHit]:
        """Full-text search over message text; any user input is safe (never raises)."""
        ...

    async def close(self) -> None: ...
