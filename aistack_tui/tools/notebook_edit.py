"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook.

Claude Code's tool and input shape (`notebook_path`, `cell_id`, `new_source`,
`cell_type`, `edit_mode`). A cell is named as Read shows it (`tools/notebook.py`): its
id, or `cell-N` by index. Like Edit it needs a Read of the notebook first and refuses a
notebook changed since; `preview` and `run` share one plan, so the diff approved is the
change written; the file is found once, beneath the project, and must be the file the
permission check judged (`file_target.open_target`); checkpoints are taken before it
like before any edit. Untouched cells keep their outputs byte for byte; the edited code
cell loses its outputs, which came from the old code.
"""

from __future__ import annotations

from typing import Literal

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
from aistack_tui.tools.file_target import open_target
from aistack_tui.tools.files import display_path, ensure_fresh, load_text_file
from aistack_tui.tools.notebook import (
    cell_id,
    cells_view,
    find_cell,
    new_cell,
    parse,
    replace_cell,
    validate,
)
from aistack_tui.tools.schema import CompactSpec
from aistack_tui.tools.write import FileChange, apply_change


class NotebookEditArgs(ToolArgs):
    notebook_path: str
    cell_id: str | None = None
    new_source: str
    cell_type: Literal["code", "markdown"] | None = None
    edit_mode: Literal["replace", "insert", "delete"] = "replace"


class NotebookEditTool(CompactSpec, Tool[NotebookEditArgs]):
    name = "NotebookEdit"
    args_model = NotebookEditArgs

    def path_argument(self, args: NotebookEditArgs) -> str | None:
        return args.notebook_path

    def permission_target(self, args: NotebookEditArgs) -> PermissionTarget:
        """The notebook changed."""
        return PathWrite(args.notebook_path)

    def describe(self, args: NotebookEditArgs) -> ToolCallDisplay:
        which = f" {args.cell_id}" if args.cell_id else ""
        return ToolCallDisplay(summary=f"NotebookEdit {args.notebook_path} "
                                       f"({args.edit_mode}{which})")

    def plan(self, args: NotebookEditArgs, ctx: ToolContext, found: Location
             ) -> tuple[FileChange, str]:
        """The change to the notebook `found`, and what it did in words."""
        path = found.path
        shown = display_path(path, ctx)
        if path.suffix.lower() != ".ipynb":
            raise ToolError(f"{path} is not a notebook (.ipynb); use Edit for other files.")
        if found.kind == "missing":
            raise ToolError(f"Notebook does not exist: {path}.")
        if found.kind == "dir":
            raise ToolError(f"{path} is a directory; give a notebook path.")
        ensure_fresh(ctx, path, found.stat())
        file = load_text_file(found)
        notebook = parse(file.text, shown)
        before = cells_view(notebook)
        mode = args.edit_mode
        if mode == "insert":
            if args.cell_type is None:
                raise ToolError("cell_type (code or markdown) is required to insert a cell.")
            at = 0 if args.cell_id is None else find_cell(notebook, args.cell_id) + 1
            cell = new_cell(notebook, args.cell_type, args.new_source)
            notebook.cells.insert(at, cell)
            done = f"Inserted {args.cell_type} cell {cell_id(cell, at)} at index {at}"
        else:
            if args.cell_id is None:
                raise ToolError(f"cell_id is required to {mode} a cell.")
            index = find_cell(notebook, args.cell_id)
            name = cell_id(notebook.cells[index], index)
            if mode == "delete":
                del notebook.cells[index]
                done = f"Deleted cell {name} (index {index})"
            else:
                replace_cell(notebook, index, args.new_source, args.cell_type)
                done = f"Replaced cell {name} (index {index})"
        validate(notebook, shown)  # never write a notebook Jupyter would refuse
        text = notebook.dumps()
        change = FileChange(path, shown, file.text, text, file.encode(text, path), file.newline)
        change.shown_as(before, cells_view(notebook))
        return change, done

    async def preview(self, args: NotebookEditArgs, ctx: ToolContext) -> ToolCallDisplay:
        with open_target(ctx, args.notebook_path) as found:
            change, done = self.plan(args, ctx, found)
        return ToolCallDisplay(summary=f"NotebookEdit {change.shown}: {done[0].lower()}"
                               f"{done[1:]} ({change.stats()})", diff=change.diff())

    async def run(self, args: NotebookEditArgs, ctx: ToolContext) -> ToolOutput:
        with open_target(ctx, args.notebook_path) as found:
            change, done = self.plan(args, ctx, found)
            note = await apply_change(change, ctx, found)
        text = "\n".join(n for n in (note, f"{done} in {change.path}.") if n)
        return ToolOutput(text, display=ToolCallDisplay(
            summary=f"NotebookEdit {change.shown}: {done[0].lower()}{done[1:]}",
            diff=change.diff(),
        ))
