"""Jupyter notebooks as cells: how Read shows them and how NotebookEdit changes them.

Both name a cell the same way, so the id the model reads is the id it edits with: the
cell's own `id` (nbformat 4.5 and later), else `cell-N` for the cell at index N (older
notebooks have no ids). Validation follows nbformat's v4 rules for the parts an edit can
break (cell types, source as text, outputs only on code cells, unique well-formed ids
from 4.5 on); the tests check the results with the `nbformat` package itself, which is
not a runtime dependency (it brings jsonschema, traitlets and jupyter_core along).

A notebook is written back as Jupyter writes it (indent 1, keys in their order, source
as a list of lines) and with the indent it had, so an edit changes only what it must.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal, cast

from aistack_tui.tools.base import ToolError

CellType = Literal["code", "markdown"]
_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")
_INDEX_ID = re.compile(r"^(?:cell-)?(\d+)$")
MAX_OUTPUT_CHARS = 2000
"""Per output shown by Read: a long traceback or table is cut; images are named only."""


@dataclass(slots=True)
class Notebook:
    data: dict[str, Any]
    indent: int = 1

    @property
    def cells(self) -> list[dict[str, Any]]:
        return self.data["cells"]

    @property
    def has_ids(self) -> bool:
        """nbformat 4.5+: every cell carries an id (older schemas forbid the key)."""
        return (self.data.get("nbformat"), self.data.get("nbformat_minor", 0)) >= (4, 5)

    @property
    def language(self) -> str:
        info = _obj(_obj(self.data.get("metadata")).get("language_info"))
        name = info.get("name")
        return name if isinstance(name, str) else "python"

    def dumps(self) -> str:
        return json.dumps(self.data, indent=self.indent, ensure_ascii=False) + "\n"


def _obj(value: object) -> dict[str, Any]:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return cast("list[Any]", value) if isinstance(value, list) else []


def cell_id(cell: dict[str, Any], index: int) -> str:
    """The name Read shows and NotebookEdit takes: the cell's id, else `cell-INDEX`."""
    found = cell.get("id")
    return found if isinstance(found, str) and found else f"cell-{index}"


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(str(s) for s in _list(source))
    return str(source)


def parse(text: str, shown: str) -> Notebook:
    """The notebook in `text`; ToolError when it is not a valid v4 notebook."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolError(f"{shown} is not valid JSON (line {e.lineno}: {e.msg}).") from e
    if not isinstance(data, dict):
        raise ToolError(f"{shown} is not a notebook: its JSON is not an object.")
    notebook = Notebook(_obj(data), _indent_of(text))
    validate(notebook, shown)
    return notebook


def _indent_of(text: str) -> int:
    match = re.search(r"^\{\n( +)\"", text)
    return len(match.group(1)) if match else 1


def validate(notebook: Notebook, shown: str) -> None:
    """Raise ToolError naming the first break of nbformat v4's rules."""
    data = notebook.data
    if data.get("nbformat") != 4:
        raise ToolError(f"{shown}: only nbformat 4 notebooks are supported "
                        f"(this one says {data.get('nbformat')!r}).")
    cells = data.get("cells")
    if not isinstance(cells, list) or not isinstance(data.get("metadata"), dict):
        raise ToolError(f"{shown} is not a notebook: it needs `cells` and `metadata`.")
    seen: set[str] = set()
    for index, raw in enumerate(_list(cells)):
        where = f"{shown}: cell {index}"
        if not isinstance(raw, dict):
            raise ToolError(f"{where} is not an object.")
        cell = _obj(raw)
        kind = cell.get("cell_type")
        if kind not in ("code", "markdown", "raw"):
            raise ToolError(f"{where} has cell_type {kind!r}.")
        source = cell.get("source")
        if not (isinstance(source, str) or (isinstance(source, list) and all(
                isinstance(s, str) for s in _list(source)))):
            raise ToolError(f"{where}: source must be a string or a list of strings.")
        if not isinstance(cell.get("metadata"), dict):
            raise ToolError(f"{where} has no metadata object.")
        if kind == "code":
            if not isinstance(cell.get("outputs"), list) or "execution_count" not in cell:
                raise ToolError(f"{where} is a code cell without outputs or execution_count.")
        elif "outputs" in cell or "execution_count" in cell:
            raise ToolError(f"{where} is a {kind} cell with outputs.")
        if notebook.has_ids:
            found = cell.get("id")
            if not isinstance(found, str) or not _ID.match(found) or found in seen:
                raise ToolError(f"{where} has a missing, malformed or repeated id {found!r}.")
            seen.add(found)


def find_cell(notebook: Notebook, wanted: str) -> int:
    """The index of the cell named `wanted`: its id, else `cell-N` / `N` as an index."""
    wanted = wanted.strip()
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == wanted:
            return index
    match = _INDEX_ID.match(wanted)
    if match and int(match.group(1)) < len(notebook.cells):
        return int(match.group(1))
    ids = ", ".join(cell_id(c, i) for i, c in enumerate(notebook.cells[:20]))
    raise ToolError(f"No cell {wanted!r} in the notebook (cells: {ids or 'none'}). "
                    "Read the notebook to see its cell ids.")


def _lines(source: str) -> list[str]:
    """Source as Jupyter stores it: lines keeping their newline, the last without."""
    return source.splitlines(keepends=True)


def new_cell(notebook: Notebook, kind: CellType, source: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind}
    if notebook.has_ids:
        taken = {c.get("id") for c in notebook.cells}
        new_id = secrets.token_hex(4)
        while new_id in taken:
            new_id = secrets.token_hex(4)
        cell["id"] = new_id
    cell["metadata"] = {}
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    cell["source"] = _lines(source)
    return cell


def replace_cell(notebook: Notebook, index: int, source: str, kind: CellType | None) -> None:
    """New source (and type); a code cell's outputs go, since they came from the old code."""
    cell = notebook.cells[index]
    old_kind = cell["cell_type"]
    kind = kind or old_kind
    cell["source"] = _lines(source)
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)
    if kind != old_kind:
        cell["cell_type"] = kind
        if kind == "code":
            cell.pop("attachments", None)  # only markdown and raw cells may have them


# --- how Read and the diff show a notebook ------------------------------------------------


def render(notebook: Notebook, shown: str) -> str:
    """Every cell with its id, type and source, then its outputs as text (for Read)."""
    parts = [f"Notebook {shown} ({notebook.language}, {len(notebook.cells)} cells). "
             "Edit a cell with NotebookEdit and its id."]
    for index, cell in enumerate(notebook.cells):
        name = cell_id(cell, index)
        attrs = f'id="{name}" index="{index}" type="{cell["cell_type"]}"'
        count = cell.get("execution_count")
        if isinstance(count, int):
            attrs += f' execution_count="{count}"'
        parts.append(f"<cell {attrs}>\n{source_of(cell)}\n</cell>")
        outputs = [o for o in (_output_text(_obj(o))
                               for o in _list(cell.get("outputs"))) if o]
        if outputs:
            parts.append(f'<outputs cell="{name}">\n' + "\n".join(outputs) + "\n</outputs>")
    return "\n".join(parts)


def _output_text(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    text = ""
    if kind == "stream":
        text = _joined(output.get("text"))
    elif kind in ("execute_result", "display_data"):
        data = _obj(output.get("data"))
        if "text/plain" in data:
            text = _joined(data["text/plain"])
        images = [k for k in data if k.startswith("image/")]
        if images:
            text = (text + "\n" if text else "") + f"[{images[0]} output]"
    elif kind == "error":
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        trace = "\n".join(str(t) for t in _list(output.get("traceback")))
        text += "\n" + _ANSI.sub("", trace) if trace else ""
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"… [output cut, {len(text)} chars]"
    return text.rstrip("\n")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _joined(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in _list(value))
    return str(value) if value is not None else ""


def cells_view(notebook: Notebook) -> str:
    """Sources in the percent format (`# %% [markdown] id`): what a diff preview shows,
    since a diff of the JSON would be escaped quotes and commas."""
    blocks = []
    for index, cell in enumerate(notebook.cells):
        kind = cell["cell_type"]
        tag = "" if kind == "code" else f" [{kind}]"
        blocks.append(f"# %%{tag} {cell_id(cell, index)}\n{source_of(cell)}".rstrip("\n"))
    return "\n\n".join(blocks) + "\n" if blocks else ""
