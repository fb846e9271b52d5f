"""The built-in tool set, one instance of each."""

from __future__ import annotations

from typing import Any

from aistack_tui.tools.base import Tool
from aistack_tui.tools.bash import BashTool
from aistack_tui.tools.edit import EditTool, MultiEditTool
from aistack_tui.tools.glob import GlobTool
from aistack_tui.tools.grep import GrepTool
from aistack_tui.tools.ls import LSTool
from aistack_tui.tools.notebook_edit import NotebookEditTool
from aistack_tui.tools.read import ReadTool
from aistack_tui.tools.task_output import TaskOutputTool, TaskStopTool
from aistack_tui.tools.todo import TodoWriteTool
from aistack_tui.tools.webfetch import WebFetchTool
from aistack_tui.tools.write import WriteTool


def builtin_tools() -> list[Tool[Any]]:
    """Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, LS, Bash (with TaskOutput
    and TaskStop for its background shells), WebFetch and TodoWrite."""
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        MultiEditTool(),
        NotebookEditTool(),
        GlobTool(),
        GrepTool(),
        LSTool(),
        BashTool(),
        TaskOutputTool(),
        TaskStopTool(),
        WebFetchTool(),
        TodoWriteTool(),
    ]
