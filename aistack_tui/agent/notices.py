"""Notices for the user, queued by whoever notices something and shown by the loop.

The sandbox, checkpoints, hooks, MCP servers and the session itself all have something
to tell the user, some of them before the agent exists. They share one `Notices` made
first by the composition root, so none of them needs the agent to speak, and the agent
yields what is queued at its next step.
"""

from __future__ import annotations

from aistack_tui.agent import events as ev


class Notices:
    """The queue of notices not yet shown."""

    def __init__(self) -> None:
        self._queued: list[ev.Notice] = []

    def notify(self, text: str, level: str = "warning") -> None:
        """Queue a notice for the user (shown at the next step of the loop)."""
        self._queued.append(ev.Notice(text, level))  # type: ignore[arg-type]

    def take(self) -> list[ev.Notice]:
        """Notices not yet shown, removed from the queue."""
        out, self._queued = self._queued, []
        return out
