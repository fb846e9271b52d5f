"""Write `tools/schemas.json`: the input schema of every built-in tool, generated ahead of
time so a session's start-up builds no pydantic schema (see `tools/static_schemas.py`).

    python -m aistack_tui.build_schemas

Run it after editing a tool's args model; the suite fails until the file is current.
It sits above the tools layer because it imports every tool, the agent's own included.
"""

from __future__ import annotations

import json
from typing import Any

from aistack_tui.agent.plan_tool import PresentPlanTool
from aistack_tui.agent.subagents import TaskTool
from aistack_tui.tools.base import Tool
from aistack_tui.tools.bash import BashTool
from aistack_tui.tools.code_search import CodeSearchTool
from aistack_tui.tools.edit import EditTool, MultiEditTool
from aistack_tui.tools.glob import GlobTool
from aistack_tui.tools.grep import GrepTool
from aistack_tui.tools.ls import LSTool
from aistack_tui.tools.memory_tools import MemorySearchTool, MemoryWriteTool
from aistack_tui.tools.notebook_edit import NotebookEditTool
from aistack_tui.tools.read import ReadTool
from aistack_tui.tools.skill import SkillTool
from aistack_tui.tools.static_schemas import SCHEMAS_FILE, fingerprint, tool_key
from aistack_tui.tools.task_output import TaskOutputTool, TaskStopTool
from aistack_tui.tools.todo import TodoWriteTool
from aistack_tui.tools.webfetch import WebFetchTool
from aistack_tui.tools.websearch import WebSearchTool
from aistack_tui.tools.write import WriteTool

PREGENERATED_TOOLS: tuple[type[Tool[Any]], ...] = (
    ReadTool,
    WriteTool,
    EditTool,
    MultiEditTool,
    NotebookEditTool,
    GlobTool,
    GrepTool,
    LSTool,
    BashTool,
    TaskOutputTool,
    TaskStopTool,
    WebFetchTool,
    WebSearchTool,
    TodoWriteTool,
    SkillTool,
    MemorySearchTool,
    MemoryWriteTool,
    CodeSearchTool,
    TaskTool,
    PresentPlanTool,
)
"""Every tool of a session except MCP server tools, whose schemas come from the server."""


def generate() -> dict[str, Any]:
    """The file's content, freshly generated from the args models."""
    return {
        tool_key(cls): {"fingerprint": fingerprint(cls), "schema": cls.generate_input_schema()}
        for cls in PREGENERATED_TOOLS
    }


def main() -> None:
    SCHEMAS_FILE.write_text(json.dumps(generate(), indent=1) + "\n")
    print(f"wrote {SCHEMAS_FILE}")


if __name__ == "__main__":  # pragma: no cover
    main()
