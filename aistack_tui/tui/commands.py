"""Every slash command the app offers: the built-ins and those backed by the session's
extensions, assembled here so neither module imports the other."""

from __future__ import annotations

from aistack_tui.tui import modes, session_commands
from aistack_tui.tui.slash import SlashRegistry, builtin_commands


def all_commands() -> SlashRegistry:
    """A fresh registry with every command (an app may add its own to it)."""
    return builtin_commands(session_commands.COMMANDS.all(), modes.COMMANDS.all())
