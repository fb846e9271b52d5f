"""The CodeSearch tool, `aistack index`, and the background refresh/watcher."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from aistack_tui.cli.commands import index as index_command
from aistack_tui.knowledge import KnowledgeIndex
from aistack_tui.tools.base import ToolContext, ToolError
from aistack_tui.tools.code_search import CodeSearchTool
from aistack_tui.tools.services import ToolServices


def _ctx(root: Path, home: Path, services: ToolServices) -> ToolContext:
    return ToolContext(project_root=root, cwd=root, home=home, services=services)


async def test_code_search_tool_returns_ranked_locations(
    bookshop_index: KnowledgeIndex, bookshop: Path, aistack_home: Path
) -> None:
    tool = CodeSearchTool()
    assert tool.read_only and not tool.needs_permission
    assert "query" in tool.spec().input_schema["properties"]
    args = tool.parse_args({"query": "refund a cancelled order", "limit": 3})
    out = await tool.run(args, _ctx(bookshop, aistack_home, ToolServices(knowledge=bookshop_index)))
    assert not out.is_error
    assert isinstance(out.content, str)
    assert out.content.startswith("1. ")
    assert "shop/payments.py" in out.content and "refund_payment" in out.content
    assert out.display is not None and out.display.summary == "CodeSearch: 3 results"


async def test_code_search_tool_without_index_or_with_bad_args_is_a_clear_error(
    tmp_path: Path, aistack_home: Path
) -> None:
    tool = CodeSearchTool()
    with pytest.raises(ToolError, match="no-knowledge"):
        await tool.run(tool.parse_args({"query": "x"}), _ctx(tmp_path, aistack_home, ToolServices()))
    with pytest.raises(ToolError, match="Invalid arguments"):
        tool.parse_args({"query": "x", "bogus": 1})
    with pytest.raises(ToolError, match="limit"):
        tool.parse_args({"query": "x", "limit": 0})


def test_index_command_builds_and_reports(
    bookshop: Path, aistack_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    index_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["index", str(bookshop)])
    assert index_command.run(args, aistack_home, Path("/nonexistent")) == 0
    out = capsys.readouterr().out
    assert "17 files" in out and "17 parsed" in out
    assert index_command.run(args, aistack_home, Path("/nonexistent")) == 0
    assert "0 parsed, 17 unchanged" in capsys.readouterr().out


def test_index_command_rejects_a_missing_directory(
    tmp_path: Path, aistack_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(path=str(tmp_path / "missing"))
    assert index_command.run(args, aistack_home, tmp_path) == 2
    assert "not a directory" in capsys.readouterr().err


async def test_background_refresh_and_watcher_pick_up_new_code(
    tmp_path: Path, aistack_home: Path
) -> None:
    (tmp_path / "a.py").write_text("def first_function():\n    pass\n")
    index = await KnowledgeIndex.open(aistack_home, tmp_path)
    try:
        task = index.start_background_refresh(watch_interval=0.05)
        assert index.start_background_refresh() is task
        for _ in range(200):
            if await index.search("first_function", 1):
                break
            await asyncio.sleep(0.02)
        (tmp_path / "b.py").write_text("def added_later():\n    pass\n")
        for _ in range(250):
            hits = await index.search("added_later", 1)
            if hits and hits[0].path == "b.py":
                break
            await asyncio.sleep(0.02)
        else:
            pytest.fail("the watcher did not index b.py")
        assert (await index.status())["refreshing"] is True
    finally:
        await index.close()
    assert task.done()
