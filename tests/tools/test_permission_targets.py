"""Each built-in tool declares what it touches from its typed arguments; the engine reads
the same target from a bare tool name and input (settings self-tests, hooks, clients).
The two must never disagree, or a call would be judged differently by where it came from."""

from __future__ import annotations

from typing import Any

import pytest

from aistack_tui.permissions.targets import (
    PathRead,
    PathWrite,
    ShellCommand,
    UrlFetch,
    WholeTool,
    target_from_input,
)
from aistack_tui.tools.builtin import builtin_tools

CALLS: list[tuple[str, dict[str, Any], object]] = [
    ("Bash", {"command": "ls -la"}, ShellCommand("ls -la")),
    ("Read", {"file_path": "src/a.py", "offset": 3}, PathRead("src/a.py", opens=True)),
    ("Glob", {"pattern": "../x/*.py"}, PathRead(".", "../x/*.py")),
    ("Glob", {"pattern": "*.py", "path": "src"}, PathRead("src", "*.py")),
    ("Grep", {"pattern": "x", "glob": "/etc/*"}, PathRead(".")),
    ("Grep", {"pattern": "x", "path": "docs"}, PathRead("docs")),
    ("LS", {"path": "/tmp"}, PathRead("/tmp")),
    ("Edit", {"file_path": "a", "old_string": "x", "new_string": "y"}, PathWrite("a")),
    ("MultiEdit", {"file_path": "a", "edits": [{"old_string": "x", "new_string": "y"}]},
     PathWrite("a")),
    ("Write", {"file_path": "b", "content": ""}, PathWrite("b")),
    ("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "1"}, PathWrite("n.ipynb")),
    ("WebFetch", {"url": "https://example.com/a"}, UrlFetch("https://example.com/a")),
    ("WebFetch", {"url": ""}, UrlFetch("")),
    ("TodoWrite", {"todos": []}, WholeTool()),
]


@pytest.mark.parametrize(("name", "raw", "expected"), CALLS)
def test_declared_target_is_the_target_of_the_same_input(
    name: str, raw: dict[str, Any], expected: object
) -> None:
    tool = next(t for t in builtin_tools() if t.name == name)
    args = tool.parse_args(raw)
    declared = tool.permission_target(args)
    assert declared == expected
    dumped = args.model_dump(by_alias=True, exclude_none=True)
    assert target_from_input(name, dumped) == declared
