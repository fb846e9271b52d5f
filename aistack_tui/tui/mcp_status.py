"""The MCP part of the status line, and which server changes are worth a line in the
conversation (a server being installed, one that newly failed: the user has to know,
and how to retry)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the renderer loads after the app's first frame
    from aistack_tui.tui.renderer import Level


class McpWatch:
    """Remembers each server's last state, so a failure is reported once."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    @staticmethod
    def summary(statuses: Iterable[Any]) -> str:
        """`connected/configured`, `✗N` for failures, `…` while any connects."""
        active = [s for s in statuses if s.status != "disabled"]
        connected = sum(s.status == "connected" for s in active)
        failed = sum(s.status == "failed" for s in active)
        text = f"{connected}/{len(active)}"
        if failed:
            text += f" ✗{failed}"
        if any(s.installing for s in active):
            text += " installing…"
        elif any(s.status == "connecting" for s in active):
            text += " …"
        return text

    def notices(self, status: Any) -> list[tuple[str, Level]]:
        """The lines `status` is worth in the conversation: a server starting to install,
        a new failure (with the command that retries it)."""
        previous = self._seen.get(status.name)
        self._seen[status.name] = "installing" if status.installing else status.status
        found: list[tuple[str, Level]] = []
        if status.installing and previous != "installing":
            found.append((f"MCP server {status.name}: {status.label}", "info"))
        if status.status == "failed" and previous != "failed":
            reason = f": {status.error}" if status.error else ""
            found.append((f"MCP server {status.name} failed{reason} "
                          f"(/mcp reconnect {status.name})", "warning"))
        return found
