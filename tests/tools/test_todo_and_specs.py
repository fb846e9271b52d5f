from __future__ import annotations

import json

import pytest

from aistack_tui.tools.base import ToolContext, ToolError, ToolRegistry
from aistack_tui.tools.builtin import builtin_tools
from aistack_tui.tools.todo import TodoWriteTool

EXPECTED_FIELDS = {
    "Read": {"file_path", "offset", "limit"},
    "Write": {"file_path", "content"},
    "Edit": {"file_path", "old_string", "new_string", "replace_all"},
    "MultiEdit": {"file_path", "edits"},
    "NotebookEdit": {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
    "Glob": {"pattern", "path"},
    "Grep": {
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "head_limit",
    },
    "LS": {"path", "ignore"},
    "Bash": {"command", "timeout", "description", "run_in_background"},
    "TaskOutput": {"task_id", "block", "timeout", "filter"},
    "TaskStop": {"task_id", "shell_id"},
    "WebFetch": {"url", "prompt"},
    "TodoWrite": {"todos"},
}
READ_ONLY = {"Read", "Glob", "Grep", "LS", "WebFetch", "TodoWrite", "TaskOutput"}


def test_builtin_tools_have_the_trained_names_and_fields() -> None:
    tools = builtin_tools()
    assert [t.name for t in tools] == list(EXPECTED_FIELDS)
    for tool in tools:
        spec = tool.spec()
        assert set(spec.input_schema["properties"]) == EXPECTED_FIELDS[tool.name], tool.name
        assert spec.description, tool.name
        assert tool.read_only == (tool.name in READ_ONLY), tool.name
        dumped = json.dumps(spec.input_schema)
        assert "$ref" not in dumped
        assert "anyOf" not in dumped
        assert '"title"' not in dumped
    assert ToolRegistry(tools).get("TodoWrite").needs_permission is False  # type: ignore[union-attr]


def test_schema_details_models_rely_on() -> None:
    specs = {t.name: t.spec().input_schema for t in builtin_tools()}
    assert specs["Read"]["required"] == ["file_path"]
    assert specs["Grep"]["properties"]["output_mode"]["enum"] == [
        "content",
        "files_with_matches",
        "count",
    ]
    edit_item = specs["MultiEdit"]["properties"]["edits"]["items"]
    assert set(edit_item["properties"]) == {"old_string", "new_string", "replace_all"}
    todo_item = specs["TodoWrite"]["properties"]["todos"]["items"]
    assert set(todo_item["required"]) == {"content", "status", "activeForm"}


def test_fixed_overhead_of_tool_definitions_stays_small() -> None:
    total = sum(len(json.dumps(t.spec().model_dump())) for t in builtin_tools())
    # Under 3,500 tokens for all thirteen (NotebookEdit, TaskOutput and TaskStop add ~500).
    assert total < 14_000


@pytest.mark.parametrize(
    "raw",
    [
        {"file_path": "a", "bogus": 1},
        {"file_path": "a", "limit": 0},
    ],
)
def test_bad_arguments_are_rejected_with_a_readable_error(raw: dict[str, object]) -> None:
    read = builtin_tools()[0]
    with pytest.raises(ToolError, match="Invalid arguments for Read"):
        read.parse_args(raw)


def test_grep_accepts_the_dash_aliases() -> None:
    grep = next(t for t in builtin_tools() if t.name == "Grep")
    args = grep.parse_args({"pattern": "x", "-i": True, "-C": 2})
    assert args.case_insensitive is True
    assert args.context == 2
    with pytest.raises(ToolError, match="Invalid arguments"):
        grep.parse_args({"pattern": "x", "-z": True})


def test_describe_summaries() -> None:
    by_name = {t.name: t for t in builtin_tools()}

    def summary(name: str, **raw: object) -> str:
        tool = by_name[name]
        return tool.describe(tool.parse_args(raw)).summary

    assert summary("Read", file_path="src/app.py") == "Read src/app.py"
    assert summary("Grep", pattern="foo", path="src") == 'Grep "foo" in src'
    assert summary("Glob", pattern="**/*.py") == 'Glob "**/*.py"'
    assert (
        summary("MultiEdit", file_path="a.py", edits=[{"old_string": "a", "new_string": "b"}])
        == "MultiEdit a.py (1 edit)"
    )
    assert summary("WebFetch", url="https://x.dev") == "WebFetch https://x.dev"


async def test_todowrite_replaces_the_list_and_renders_it(ctx: ToolContext) -> None:
    tool = TodoWriteTool()
    todos = [
        {"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
        {"content": "Fix bug", "status": "in_progress", "activeForm": "Fixing bug", "id": "2"},
        {"content": "Ship", "status": "pending", "activeForm": "Shipping"},
    ]
    out = await tool.run(tool.parse_args({"todos": todos}), ctx)
    assert [t.content for t in ctx.todos] == ["Write tests", "Fix bug", "Ship"]
    assert ctx.todos[1].active_form == "Fixing bug"
    assert out.content == (
        "Todo list updated (1/3 completed).\n[x] Write tests\n[>] Fix bug\n[ ] Ship"
    )
    out = await tool.run(tool.parse_args({"todos": todos[1:2] * 2}), ctx)
    assert "2 tasks are in_progress" in str(out.content)
    await tool.run(tool.parse_args({"todos": []}), ctx)
    assert ctx.todos == []


def test_todowrite_rejects_unknown_status() -> None:
    with pytest.raises(ToolError, match="status"):
        TodoWriteTool().parse_args(
            {"todos": [{"content": "x", "status": "done", "activeForm": "x"}]}
        )
