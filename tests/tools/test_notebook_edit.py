"""NotebookEdit on real notebooks (written by nbformat, with stream, result, image and
error outputs): Read and NotebookEdit agree on cell ids, the result is valid by
nbformat's own schema, and untouched cells keep their outputs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest

from aistack_tui.tools.base import ToolContext, ToolError, ToolOutput, checked_path
from aistack_tui.tools.notebook_edit import NotebookEditTool
from aistack_tui.tools.read import ReadTool

NOTEBOOKS = Path(__file__).parent / "notebooks"


def copy(name: str, project: Path) -> Path:
    target = project / name
    shutil.copy(NOTEBOOKS / name, target)
    return target


async def read(ctx: ToolContext, path: Path) -> str:
    tool = ReadTool()
    out = await tool.run(tool.parse_args({"file_path": str(path)}), ctx)
    assert isinstance(out.content, str)
    return out.content


async def edit(ctx: ToolContext, **raw: Any) -> ToolOutput:
    tool = NotebookEditTool()
    return await tool.run(tool.parse_args(raw), ctx)


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    nbformat.validate(nbformat.reads(path.read_text(), as_version=nbformat.NO_CONVERT))
    return data


def ids_shown(text: str) -> list[str]:
    return re.findall(r'<cell id="([^"]+)"', text)


async def test_read_shows_cells_ids_and_outputs(ctx: ToolContext, project: Path) -> None:
    path = copy("analysis.ipynb", project)
    text = await read(ctx, path)
    assert ids_shown(text) == ["intro", "load", "total", "plot", "oops"]
    assert '<cell id="load" index="1" type="code" execution_count="1">' in text
    assert "3 months" in text and "358" in text
    assert "[image/png output]" in text and "iVBORw0KGgo" not in text  # named, not sent
    assert "IndexError: list index out of range" in text and "\x1b[" not in text


async def test_replace_a_code_cell_keeps_other_outputs(ctx: ToolContext,
                                                       project: Path) -> None:
    path = copy("analysis.ipynb", project)
    before = load(path)
    await read(ctx, path)
    out = await edit(ctx, notebook_path=str(path), cell_id="total",
                     new_source="total = sum(v for _, v in rows)\nprint(total)")
    assert "Replaced cell total (index 2)" in str(out.content)
    after = load(path)
    cell = after["cells"][2]
    assert cell["source"] == ["total = sum(v for _, v in rows)\n", "print(total)"]
    assert cell["outputs"] == [] and cell["execution_count"] is None  # stale outputs go
    for i in (0, 1, 3, 4):
        assert after["cells"][i] == before["cells"][i]  # outputs, image and all, kept
    assert after["metadata"] == before["metadata"]
    # Written as Jupyter writes it: only the edited cell's lines changed.
    changed = [line for line in path.read_text().splitlines()
               if line not in (NOTEBOOKS / "analysis.ipynb").read_text().splitlines()]
    assert len(changed) <= 4
    assert out.display is not None and out.display.diff is not None
    diff = out.display.diff.unified()
    assert "+print(total)" in diff and "-total" in diff and '\\"' not in diff  # cells, not JSON


async def test_insert_markdown_and_code_cells_with_new_ids(ctx: ToolContext,
                                                           project: Path) -> None:
    path = copy("analysis.ipynb", project)
    await read(ctx, path)
    await edit(ctx, notebook_path=str(path), cell_id="load", cell_type="markdown",
               new_source="## Totals", edit_mode="insert")
    await read(ctx, path)
    await edit(ctx, notebook_path=str(path), cell_type="code", new_source="import csv",
               edit_mode="insert")  # no cell_id: first
    cells = load(path)["cells"]
    assert [c["cell_type"] for c in cells[:4]] == ["code", "markdown", "code", "markdown"]
    assert cells[3]["source"] == ["## Totals"] and "outputs" not in cells[3]
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None
    new_ids = {cells[0]["id"], cells[3]["id"]}
    assert len(new_ids) == 2 and not new_ids & {"intro", "load", "total", "plot", "oops"}
    # The new ids are the ones Read shows next.
    assert ids_shown(await read(ctx, path))[0] == cells[0]["id"]


async def test_delete_and_change_type(ctx: ToolContext, project: Path) -> None:
    path = copy("analysis.ipynb", project)
    await read(ctx, path)
    await edit(ctx, notebook_path=str(path), cell_id="oops", new_source="",
               edit_mode="delete")
    await read(ctx, path)
    await edit(ctx, notebook_path=str(path), cell_id="plot", cell_type="markdown",
               new_source="The plot is gone.")
    cells = load(path)["cells"]
    assert [c["id"] for c in cells] == ["intro", "load", "total", "plot"]
    assert cells[3]["cell_type"] == "markdown" and "outputs" not in cells[3]
    assert "execution_count" not in cells[3]


async def test_legacy_notebook_without_ids_by_index(ctx: ToolContext, project: Path) -> None:
    path = copy("legacy.ipynb", project)
    text = await read(ctx, path)
    assert ids_shown(text) == ["cell-0", "cell-1"]
    await edit(ctx, notebook_path=str(path), cell_id="cell-0", new_source="## Notes, revised")
    await read(ctx, path)
    await edit(ctx, notebook_path=str(path), cell_id="cell-1", cell_type="code",
               new_source="y = 1", edit_mode="insert")
    data = load(path)
    assert data["nbformat_minor"] == 4
    assert all("id" not in c for c in data["cells"])  # 4.4 forbids ids: none added
    assert data["cells"][1]["outputs"][0]["data"]["text/plain"] == "42"


async def test_refusals(ctx: ToolContext, project: Path) -> None:
    path = copy("analysis.ipynb", project)
    original = path.read_bytes()
    with pytest.raises(ToolError, match="has not been read"):
        await edit(ctx, notebook_path=str(path), cell_id="load", new_source="x")
    await read(ctx, path)
    with pytest.raises(ToolError, match="No cell 'nope'"):
        await edit(ctx, notebook_path=str(path), cell_id="nope", new_source="x")
    with pytest.raises(ToolError, match="cell_type"):
        await edit(ctx, notebook_path=str(path), new_source="x", edit_mode="insert")
    with pytest.raises(ToolError, match="cell_id is required"):
        await edit(ctx, notebook_path=str(path), new_source="x")
    # The path written must be the one the permission check judged.
    token = checked_path.set(project / "other.ipynb")
    try:
        with pytest.raises(ToolError, match="changed while the call waited"):
            await edit(ctx, notebook_path=str(path), cell_id="load", new_source="x")
    finally:
        checked_path.reset(token)
    assert path.read_bytes() == original


async def test_broken_notebook_is_refused_not_rewritten(ctx: ToolContext,
                                                        project: Path) -> None:
    path = project / "broken.ipynb"
    data = json.loads((NOTEBOOKS / "analysis.ipynb").read_text())
    data["cells"][1]["id"] = "intro"  # a repeated id
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(ToolError, match="repeated id"):
        await read(ctx, path)


async def test_preview_is_the_change_written(ctx: ToolContext, project: Path) -> None:
    path = copy("analysis.ipynb", project)
    await read(ctx, path)
    tool = NotebookEditTool()
    args = tool.parse_args({"notebook_path": str(path), "cell_id": "intro",
                            "new_source": "# Sales, Q1"})
    shown = await tool.preview(args, ctx)
    assert shown.diff is not None and "+# Sales, Q1" in shown.diff.unified()
    assert path.read_bytes() == (NOTEBOOKS / "analysis.ipynb").read_bytes()  # nothing yet
    out = await tool.run(args, ctx)
    assert out.display is not None and out.display.diff is not None
    assert out.display.diff.unified() == shown.diff.unified()
