"""The pregenerated tool schemas (tools/schemas.json) against the args models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from aistack_tui import build_schemas
from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.session.config import make_run_config
from aistack_tui.tools import static_schemas
from aistack_tui.tools.read import ReadArgs, ReadTool

REGENERATE = "out of date: run `python -m aistack_tui.build_schemas`"


@pytest.mark.parametrize("cls", build_schemas.PREGENERATED_TOOLS, ids=static_schemas.tool_key)
def test_pregenerated_schema_matches_the_args_model(cls: type[Any]) -> None:
    stored = static_schemas.pregenerated(cls)
    assert stored is not None, f"{static_schemas.tool_key(cls)}: {REGENERATE}"
    assert stored == cls.generate_input_schema(), REGENERATE


def test_file_is_exactly_what_the_generator_writes() -> None:
    import json

    on_disk = json.loads(static_schemas.SCHEMAS_FILE.read_text(encoding="utf-8"))
    assert on_disk == build_schemas.generate(), REGENERATE


def test_an_edited_args_model_gets_a_generated_schema_not_the_stale_one() -> None:
    class EditedReadArgs(ReadArgs):
        encoding: str = Field(default="utf-8", description="Text encoding")

    # Same module and name as the stored ReadTool entry, different arguments.
    edited = type("ReadTool", (ReadTool,), {"args_model": EditedReadArgs})
    edited.__module__ = ReadTool.__module__
    edited.__qualname__ = ReadTool.__qualname__
    assert static_schemas.tool_key(edited) == static_schemas.tool_key(ReadTool)

    assert static_schemas.pregenerated(edited) is None
    schema = edited().spec().input_schema
    assert "encoding" in schema["properties"]
    assert "encoding" not in ReadTool().spec().input_schema["properties"]


def test_args_are_still_validated_with_deferred_models() -> None:
    from aistack_tui.tools.base import ToolError
    from aistack_tui.tools.edit import MultiEditTool

    tool = MultiEditTool()
    args = tool.parse_args({"file_path": "a", "edits": [{"old_string": "x", "new_string": "y"}]})
    assert args.edits[0].new_string == "y"
    with pytest.raises(ToolError, match="edits"):
        tool.parse_args({"file_path": "a", "edits": [{"old_string": "x", "bogus": 1}]})


async def test_every_tool_of_a_session_has_a_pregenerated_schema(
    git_repo: Path, aistack_home: Path
) -> None:
    env = {"AISTACK_HOME": str(aistack_home), "HOME": str(git_repo), "ANTHROPIC_API_KEY": "k"}
    config = make_run_config(cwd=git_repo, env=env, model="anthropic/claude-sonnet-4-6")
    session = await open_session(config, DenyAll())
    try:
        tools = [session.agent.runner.tools.get(n) for n in session.agent.runner.tools.names()]
    finally:
        await session.close()
    keys = {static_schemas.tool_key(type(t)) for t in tools}
    assert keys <= {static_schemas.tool_key(c) for c in build_schemas.PREGENERATED_TOOLS}
    for tool in tools:
        assert static_schemas.pregenerated(type(tool)) is not None, type(tool)
