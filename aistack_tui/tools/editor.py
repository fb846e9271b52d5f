"""The editor as the place files and commands live (ACP's `fs` and `terminal`).

When an editor drives a session and offers them, Read sees the editor's buffers (unsaved
changes included), Write, Edit and MultiEdit hand their final text to the editor (which
applies it and shows it), and Bash runs its command in one of the editor's terminals.
Everything that guards a call stays ours: the permission check, the checkpoint, the
stale-read check, the diff, and for Bash the sandbox the command runs in (the editor is
given the sandbox's own argv). The channel installs these services through the session
facade (`LiveSession.use_editor_files`, `use_editor_terminal`); the tools find them in
`ToolContext.services` (their types are in `tools/services.py`), so this layer never
imports the protocol, and without them (or when a call to the editor fails) the tools
use the disk as always.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from aistack_tui.tools.files import BINARY_EXTENSIONS, BINARY_SNIFF_BYTES, IMAGE_TYPES, looks_binary
from aistack_tui.tools.services import EditorFiles, EditorTerminal

if TYPE_CHECKING:
    from aistack_tui.tools.base import ToolContext

current_call_id: ContextVar[str] = ContextVar("current_call_id", default="")
"""The id of the tool call being run (set by the tool runner in each call's own task), so
a terminal the editor opens for it is shown in that call."""

NOTEBOOK_SUFFIXES = frozenset({".ipynb"})
"""Read takes these from disk even when the editor could give them: a notebook's JSON
is what Read shows, and an editor's notebook view is not that text."""


def editor_files(ctx: ToolContext) -> EditorFiles | None:
    return ctx.services.editor_files


def editor_terminal(ctx: ToolContext) -> EditorTerminal | None:
    return ctx.services.editor_terminal


def editor_may_hold(path: Path) -> bool:
    """Whether the editor can stand in for the disk for this file, by its name: not an
    image, a known binary type or a notebook."""
    suffix = path.suffix.lower()
    return not (suffix in IMAGE_TYPES or suffix in BINARY_EXTENSIONS
                or suffix in NOTEBOOK_SUFFIXES)


def is_editor_text(path: Path) -> bool:
    """A text file on disk the editor can stand in for (its name and its first bytes)."""
    if not editor_may_hold(path):
        return False
    try:
        if not path.is_file():
            return False
        with path.open("rb") as f:
            return not looks_binary(f.read(BINARY_SNIFF_BYTES))
    except OSError:
        return False  # the disk read says what is wrong


async def editor_base(ctx: ToolContext, path: Path) -> tuple[str | None, str]:
    """The editor's text of `path` for an edit to start from (unsaved changes included),
    and a note when the editor failed; (None, "") when the disk is where to start."""
    files = editor_files(ctx)
    read = files.read if files is not None else None
    if read is None or not await asyncio.to_thread(is_editor_text, path):
        return None, ""
    try:
        return await read(path), ""
    except asyncio.CancelledError:
        raise
    except Exception as e:
        return None, editor_failure("read", path, e)


def editor_failure(action: str, path: Path, error: BaseException) -> str:
    """The note the model gets when the editor failed and the disk was used instead."""
    why = str(error) or type(error).__name__
    return f"(The editor could not {action} {path} ({why}); the file on disk was used.)"
