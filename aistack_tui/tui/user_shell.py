"""`!command` in the TUI: the user's own shell command, run in the project as a worker of
its own, so Esc or Ctrl+C can stop it (with everything it started) as they stop a turn."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from aistack_tui.tui.widgets.entries import ShellEntry

if TYPE_CHECKING:
    from aistack_tui.session.live import LiveSession
    from aistack_tui.tui.renderer import Level
    from aistack_tui.tui.widgets.conversation import Conversation

SHELL_TIMEOUT_S = 120.0


class ShellHost(Protocol):
    """What a `!command` needs of the app."""

    session: LiveSession | None

    @property
    def conversation(self) -> Conversation: ...
    async def notice(self, text: str, level: Level = "info") -> None: ...


async def run_user_shell(app: ShellHost, command: str) -> None:
    """Run `command`; its output is shown and joins the next prompt (the session keeps it)."""
    if app.session is None:
        await app.notice("The session is still starting; run it again in a moment.", "warning")
        return
    try:
        result = await app.session.run_user_command(command, SHELL_TIMEOUT_S)
    except asyncio.CancelledError:  # Esc: the command was stopped with all it started
        await app.notice(f"Stopped: !{command}", "warning")
        raise
    await app.conversation.add(ShellEntry(command, result.output, result.exit_code))
