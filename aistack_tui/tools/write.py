"""Write: create a file or replace one the model has read.

`preview` and `run` share one plan, so the diff a user approves in the confirm dialog is
exactly what lands on disk; `run` recomputes the plan because the file may have changed
while the dialog was open. The file is found once (`file_target.open_target`: beneath the
project, the file the permission check judged) and read and written through that walk.
When an editor lends its files (`tools/editor.py`), the plan starts from the editor's
text and the final text goes to the editor, which applies and saves it; the checks and
the diff are the same.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from aistack_tui.beneath import Location
from aistack_tui.permissions.targets import PathWrite, PermissionTarget
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.diffs import FileDiff, file_diff
from aistack_tui.tools.editor import editor_base, editor_failure, editor_files, editor_may_hold
from aistack_tui.tools.file_target import open_target
from aistack_tui.tools.files import (
    TextFile,
    count_lines,
    display_path,
    ensure_fresh,
    load_text_file,
    record_read,
)
from aistack_tui.tools.schema import CompactSpec


class WriteArgs(ToolArgs):
    file_path: str
    content: str = Field(description="The whole new content")


@dataclass(slots=True)
class FileChange:
    """What a file tool is about to write; `old` is None when the file is new."""

    path: Path
    shown: str
    old: str | None
    new: str
    data: bytes
    newline: str = "\n"
    """The file's line endings (`new` uses `\n`): what an editor is given keeps them."""

    _diff: FileDiff | None = field(default=None, init=False, repr=False)

    def diff(self) -> FileDiff:
        """The change as data; one diff pass however often a summary asks for it."""
        if self._diff is None:
            self._diff = file_diff(self.shown, self.old or "", self.new)
        return self._diff

    def shown_as(self, old_view: str, new_view: str) -> None:
        """Diff these readable views instead of the raw texts (a notebook's cells rather
        than its JSON); what is written stays `data`."""
        self._diff = file_diff(self.shown, old_view, new_view)

    def stats(self) -> str:
        return str(self.diff().stat())

    def text(self) -> str:
        """The new content as text in the file's line endings (for an editor)."""
        return self.new.replace("\n", "\r\n") if self.newline == "\r\n" else self.new


async def apply_change(change: FileChange, ctx: ToolContext, found: Location) -> str:
    """Write the change: through the editor when it lends its files, else to disk through
    the walk that found the file (`found`). Returns a note for the model when the editor
    failed and the disk was written instead."""
    files = editor_files(ctx)
    write = files.write if files is not None else None
    note = ""
    if write is not None and editor_may_hold(change.path):
        try:
            await write(change.path, change.text())
        except asyncio.CancelledError:
            raise
        except Exception as e:
            note = editor_failure("write", change.path, e)
        else:
            # What the model now knows is what the editor saved; a file the editor has not
            # saved yet must be read again before the next change.
            try:
                record_read(ctx, change.path)
            except OSError:
                ctx.read_files.pop(change.path, None)
            return ""
    try:
        found.write(change.data)
        st = found.stat()
    except OSError as e:
        raise ToolError(f"Cannot write {change.path}: {e.strerror or e}") from e
    if st is not None:
        record_read(ctx, change.path, st)
    return note


class WriteTool(CompactSpec, Tool[WriteArgs]):
    name = "Write"
    args_model = WriteArgs

    def permission_target(self, args: WriteArgs) -> PermissionTarget:
        """The file written."""
        return PathWrite(args.file_path)

    def describe(self, args: WriteArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"Write {args.file_path}")

    def plan(self, args: WriteArgs, ctx: ToolContext, found: Location,
             base: str | None = None) -> FileChange:
        """The change to the file `found`; `base` is the editor's text of it, which it
        replaces."""
        path = found.path
        shown = display_path(path, ctx)
        if found.kind == "dir":
            raise ToolError(f"{path} is a directory; give a file path.")
        if found.kind == "missing":
            return FileChange(path, shown, None, args.content, args.content.encode("utf-8"))
        ensure_fresh(ctx, path, found.stat())
        current = with_base(load_text_file(found), base)
        new = args.content
        if current.newline == "\r\n":
            new = new.replace("\r\n", "\n")
        else:
            current = TextFile(current.text, current.encoding, "\n")
        try:
            data = current.encode(new, path)
        except ToolError:
            # A whole-file rewrite may change the encoding; UTF-8 is the safe default.
            data = TextFile(new, "utf-8", current.newline).encode(new, path)
        return FileChange(path, shown, current.text, new, data, current.newline)

    async def preview(self, args: WriteArgs, ctx: ToolContext) -> ToolCallDisplay:
        with open_target(ctx, args.file_path) as found:
            base, _ = await editor_base(ctx, found.path)
            change = self.plan(args, ctx, found, base)
        verb = "Create" if change.old is None else "Overwrite"
        return ToolCallDisplay(
            summary=f"{verb} {change.shown} ({count_lines(change.new)} lines)",
            diff=change.diff(),
        )

    async def run(self, args: WriteArgs, ctx: ToolContext) -> ToolOutput:
        with open_target(ctx, args.file_path) as found:
            base, read_note = await editor_base(ctx, found.path)
            change = self.plan(args, ctx, found, base)
            write_note = await apply_change(change, ctx, found)
        lines = count_lines(change.new)
        if change.old is None:
            text = f"Created {change.path} ({lines} lines)."
            summary = f"Created {change.shown} ({lines} lines)"
        else:
            text = f"Updated {change.path} ({lines} lines, {change.stats()})."
            summary = f"Wrote {change.shown} ({change.stats()})"
        text = "\n".join(n for n in (read_note, write_note, text) if n)
        return ToolOutput(text, display=ToolCallDisplay(summary=summary, diff=change.diff()))


def with_base(file: TextFile, base: str | None) -> TextFile:
    """The file as the editor has it (`base`), in the disk's encoding and line endings."""
    if base is None:
        return file
    text = base.replace("\r\n", "\n") if file.newline == "\r\n" else base
    return TextFile(text, file.encoding, file.newline)
