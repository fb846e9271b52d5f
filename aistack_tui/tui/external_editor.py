"""Ctrl+G: write the prompt in `$VISUAL` / `$EDITOR`, as in Claude Code and a shell's
edit-and-execute-command.

The app gives the terminal to the editor (`App.suspend`), the editor edits a temporary
file holding the prompt, and what it saved comes back into the prompt (not sent: the
user reads it once more and presses Enter). A driver that cannot be suspended (Pilot's
headless one) has no terminal to give away, so the editor simply runs.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual.app import App, SuspendNotSupported


class EditorError(Exception):
    """The editor could not be run; the message says why, for the user."""


def editor_command(env: Mapping[str, str]) -> list[str]:
    command = env.get("VISUAL") or env.get("EDITOR") or ""
    words = shlex.split(command) if command.strip() else []
    if not words:
        raise EditorError("Set $VISUAL or $EDITOR to edit the prompt in an editor")
    return words


def edit_text(app: App[Any], text: str, env: Mapping[str, str] = os.environ) -> str:
    """`text` after the user edited it in their editor (unchanged if the editor failed)."""
    command = editor_command(env)
    fd, name = tempfile.mkstemp(prefix="aistack-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        with contextlib.ExitStack() as terminal:
            with contextlib.suppress(SuspendNotSupported):
                terminal.enter_context(app.suspend())
            try:
                status = subprocess.run([*command, str(path)], check=False).returncode
            except OSError as e:
                raise EditorError(f"Cannot run {command[0]}: {e.strerror}") from e
        if status != 0:
            raise EditorError(f"{command[0]} exited with status {status}: prompt unchanged")
        edited = path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)
    # Editors end a file with a newline the user did not mean to send.
    return edited[:-1] if edited.endswith("\n") else edited
