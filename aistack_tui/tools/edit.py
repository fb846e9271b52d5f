"""Edit and MultiEdit: exact string replacement in a file the model has read.

Matching is exact (no fuzzy patching) so a change lands where the model meant or not at
all, with an error that says why: not found, or found N times. The file's text is
compared with `\\n` line endings whatever the disk uses, because Read shows lines without
`\\r` and the model copies from that; the original endings and encoding are restored on
write. MultiEdit applies its edits in order to an in-memory copy and writes once, so it
is all or nothing. With an editor lending its files, the edits apply to the editor's text
(unsaved changes included, as Read showed them) and the result goes to the editor.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

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
from aistack_tui.tools.editor import editor_base
from aistack_tui.tools.file_target import open_target
from aistack_tui.tools.files import (
    TextFile,
    display_path,
    ensure_fresh,
    load_text_file,
    snippet_around,
)
from aistack_tui.tools.schema import CompactSpec
from aistack_tui.tools.write import FileChange, apply_change, with_base


class EditArgs(ToolArgs):
    file_path: str
    old_string: str = Field(description="Exact text to replace")
    new_string: str = Field(description="Its replacement (must differ)")
    replace_all: bool = Field(default=False, description="Replace every occurrence")


class EditOperation(BaseModel):
    # No field descriptions: the MultiEdit prompt refers to Edit's, and every schema byte
    # is sent with every request.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    old_string: str
    new_string: str
    replace_all: bool = False


class MultiEditArgs(ToolArgs):
    file_path: str
    edits: list[EditOperation] = Field(
        min_length=1
    )


def _normalise(s: str, file: TextFile) -> str:
    return s.replace("\r\n", "\n") if file.newline == "\r\n" else s


def _replace(text: str, old: str, new: str, replace_all: bool, path: Path) -> tuple[str, int]:
    """The new text and the 1-based line where the first replacement starts."""
    if old == new:
        raise ToolError("old_string and new_string are identical; there is nothing to change.")
    if old == "":
        if text == "":
            return new, 1
        raise ToolError(
            f"old_string is empty but {path} is not; give the exact text to replace "
            "(use Write to replace the whole file)."
        )
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_string was not found in {path}. It must match the file exactly, including "
            f"whitespace and indentation.{_near_miss(text, old)} Read the file again if unsure "
            "of its current content."
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string matches {count} times in {path}. Include more surrounding lines to "
            "make it unique, or set replace_all to true to replace every occurrence."
        )
    line = text[: text.index(old)].count("\n") + 1
    return (text.replace(old, new) if replace_all else text.replace(old, new, 1)), line


def _near_miss(text: str, old: str) -> str:
    """A hint when the text exists with different indentation or trailing spaces."""
    wanted = [ln.strip() for ln in old.strip("\n").split("\n")]
    if not wanted or not wanted[0]:
        return ""
    lines = text.split("\n")
    for i in range(len(lines) - len(wanted) + 1):
        if all(lines[i + k].strip() == w for k, w in enumerate(wanted)):
            return f" A similar block with different whitespace starts at line {i + 1}."
    return ""


class _EditBase:
    """The shared plan/preview/run of Edit and MultiEdit."""

    name: str

    def _operations(self, args: ToolArgs) -> list[EditOperation]:
        raise NotImplementedError

    def plan(self, args: EditArgs | MultiEditArgs, ctx: ToolContext, found: Location,
             base: str | None = None) -> tuple[FileChange, int]:
        """The change to the file `found` and the line it starts at; `base` is the
        editor's text of the file."""
        path = found.path
        shown = display_path(path, ctx)
        ops = self._operations(args)
        if found.kind == "dir":
            raise ToolError(f"{path} is a directory; give a file path.")
        if found.kind == "missing":
            if ops[0].old_string != "":
                raise ToolError(f"File does not exist: {path}. Use Write to create a new file.")
            file = TextFile("", "utf-8", "\n")
            old: str | None = None
        else:
            ensure_fresh(ctx, path, found.stat())
            file = with_base(load_text_file(found), base)
            old = file.text
        text = file.text
        first_line = 0
        for i, op in enumerate(ops):
            try:
                text, line = _replace(
                    text,
                    _normalise(op.old_string, file),
                    _normalise(op.new_string, file),
                    op.replace_all,
                    path,
                )
            except ToolError as e:
                if len(ops) == 1:
                    raise
                raise ToolError(f"Edit {i + 1} of {len(ops)}: {e} No edits were applied.") from e
            first_line = first_line or line
        return FileChange(path, shown, old, text, file.encode(text, path),
                          file.newline), first_line

    async def preview(self, args: EditArgs | MultiEditArgs, ctx: ToolContext) -> ToolCallDisplay:
        with open_target(ctx, args.file_path) as found:
            base, _ = await editor_base(ctx, found.path)
            change, _ = self.plan(args, ctx, found, base)
        return ToolCallDisplay(
            summary=f"{self.name} {change.shown} ({change.stats()})", diff=change.diff()
        )

    async def run(self, args: EditArgs | MultiEditArgs, ctx: ToolContext) -> ToolOutput:
        with open_target(ctx, args.file_path) as found:
            base, read_note = await editor_base(ctx, found.path)
            change, line = self.plan(args, ctx, found, base)
            write_note = await apply_change(change, ctx, found)
        ops = self._operations(args)
        what = "1 edit" if len(ops) == 1 else f"{len(ops)} edits"
        verb = "Created" if change.old is None else "Edited"
        # Show the model its change in place (capped: a big insertion needs no echo).
        span = min(30, max(op.new_string.count("\n") for op in ops) + 1)
        text = (
            f"{verb} {change.path} ({what}, {change.stats()}). "
            f"Result around line {line}:\n{snippet_around(change.new, line, line + span - 1)}"
        )
        text = "\n".join(n for n in (read_note, write_note, text) if n)
        return ToolOutput(
            text,
            display=ToolCallDisplay(
                summary=f"{verb} {change.shown} ({change.stats()})", diff=change.diff()
            ),
        )


class EditTool(CompactSpec, _EditBase, Tool[EditArgs]):
    name = "Edit"
    args_model = EditArgs

    def _operations(self, args: ToolArgs) -> list[EditOperation]:
        assert isinstance(args, EditArgs)
        return [
            EditOperation(
                old_string=args.old_string, new_string=args.new_string, replace_all=args.replace_all
            )
        ]

    def permission_target(self, args: EditArgs) -> PermissionTarget:
        """The file changed."""
        return PathWrite(args.file_path)

    def describe(self, args: EditArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"Edit {args.file_path}")


class MultiEditTool(CompactSpec, _EditBase, Tool[MultiEditArgs]):
    name = "MultiEdit"
    args_model = MultiEditArgs

    def _operations(self, args: ToolArgs) -> list[EditOperation]:
        assert isinstance(args, MultiEditArgs)
        return list(args.edits)

    def permission_target(self, args: MultiEditArgs) -> PermissionTarget:
        """The file changed."""
        return PathWrite(args.file_path)

    def describe(self, args: MultiEditArgs) -> ToolCallDisplay:
        n = len(args.edits)
        return ToolCallDisplay(summary=f"MultiEdit {args.file_path} ({n} edit{'s' * (n != 1)})")
