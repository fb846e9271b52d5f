"""Running the TUI in a terminal: mouse reporting, the end signals, and what is printed
after the app has left the screen (errors, the resume hint)."""

from __future__ import annotations

import os
import sys

from aistack_tui.session.config import RunConfig
from aistack_tui.shutdown.hangup import on_end_signals
from aistack_tui.shutdown.status import EXIT_HANGUP, EXIT_TERMINATED
from aistack_tui.tui.app import AistackApp


def run_tui(config: RunConfig, initial_prompt: str | None, typed: bytes = b"") -> int:
    """Run the TUI until the user quits; returns the process exit code. `typed`: the keys
    the terminal held when the CLI took it out of cooked mode (`cli/typeahead.py`)."""
    app = AistackApp(config, initial_prompt, typed=typed)
    mouse = os.environ.get("AISTACK_NO_MOUSE", "") in ("", "0")
    app._mouse_enabled = mouse
    with on_end_signals(lambda status: app.call_later(app.hang_up, status)):
        code = app.run(mouse=mouse)
    if app.return_code in (EXIT_HANGUP, EXIT_TERMINATED):
        return app.return_code  # the messages below may have no one left to read them
    if app.error_message:
        print(app.error_message, file=sys.stderr)
    if app.exit_message:
        print(app.exit_message)
    if isinstance(code, int):
        return code
    return app.return_code or 0

