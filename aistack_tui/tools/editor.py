"""The editor as the place files and commands live (ACP's `fs` and `terminal`).

When an editor drives a session and offers them, Read sees the editor's buffers (unsaved
changes included), Write, Edit and MultiEdit hand their final text to the editor (which
applies it and shows it), and Bash runs its command in one of the editor's terminals.
Everything that guards a call stays ours: the permission check, the checkpoint, the
stale-read check, the diff, and for Bash the sandbox the command runs in (the editor is
given the sandbox's own argv). The channel installs these services through the session
facade (`LiveSession.use_editor_files`, `use_editor_terminal`); the tools find them in
`ToolContext.services` by the keys below, so this layer never imports the protocol, and
without them (or when a call to the editor fails) the tools use the disk as always.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from aistack_tui.tools.files import BINARY_EXTENSIONS, BINARY_SNIFF_BYTES, IMAGE_TYPES, looks_binary

if TYPE_CHECKING:
    from aistack_tui.tools.base import ToolContext

EDITOR_FILES = "editor_files"
"""`ToolContext.services` key of an `EditorFiles`."""
EDITOR_TERMINAL = "editor_terminal"
"""`ToolContext.services` key of an `EditorTerminal`."""

current_call_id: ContextVar[str] = ContextVar("current_call_id", default="")
"""The id of the tool call being run (set by the tool runner in each call's own task), so
a terminal the editor opens for it is shown in that call."""

NOTEBOOK_SUFFIXES = frozenset({".ipynb"})
"""Read takes these from disk even when the editor could give them: a notebook's JSON
is what Read shows, and an editor's notebook view is not that text."""

FileReader = Callable[[Path], Awaitable[str]]
FileWriter = Callable[[Path, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class EditorFiles:
    """The editor's text files: `read` returns a buffer's current text, `write` replaces
    it (the editor saves it); None where the editor does not offer it. Either raises
    when the editor cannot; the caller falls back to the disk and says so."""

    read: FileReader | None
    write: FileWriter | None


class TerminalRun(Protocol):
    """One command running in an editor terminal (ACP `terminal/*` on one terminal id)."""

    @property
    def terminal_id(self) -> str: ...

    async def wait_for_exit(self) -> tuple[int | None, str | None]:
        """(exit code, signal name) once the command has exited."""
        ...

    async def output(self) -> tuple[str, bool]:
        """(output so far, whether the editor cut its beginning to its byte limit)."""
        ...

    async def kill(self) -> None: ...

    async def release(self) -> None:
        """Free the terminal (killing the command if it still runs); the editor keeps
        showing what it printed."""
        ...


class EditorTerminal(Protocol):
    """Starts commands in the editor's terminals."""

    async def create(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                     output_byte_limit: int, tool_use_id: str) -> TerminalRun:
        """Start `argv` (no shell is added) in `cwd` with `env`; the editor shows the
        terminal in the tool call `tool_use_id`."""
        ...


def editor_files(ctx: ToolContext) -> EditorFiles | None:
    found = ctx.services.get(EDITOR_FILES)
    return found if isinstance(found, EditorFiles) else None


def editor_terminal(ctx: ToolContext) -> EditorTerminal | None:
    found: EditorTerminal | None = ctx.services.get(EDITOR_TERMINAL)
    return found


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
