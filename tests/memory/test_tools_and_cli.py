"""MemorySearch / MemoryWrite tools and the `aistack memory` subcommand."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from aistack_tui.cli.commands import memory as memory_cmd
from aistack_tui.memory.manager import MemoryManager
from aistack_tui.tools.base import ToolContext, ToolError
from aistack_tui.tools.memory_tools import MemorySearchTool, MemoryWriteTool
from aistack_tui.tools.services import ToolServices


def _ctx(project: Path, home: Path, manager: MemoryManager | None) -> ToolContext:
    return ToolContext(project_root=project, cwd=project, home=home, session_id="s1",
                       services=ToolServices(memory=manager))


async def test_tools_write_then_search(memory: MemoryManager, project: Path,
                                       aistack_home: Path) -> None:
    ctx = _ctx(project, aistack_home, memory)
    write, search = MemoryWriteTool(), MemorySearchTool()
    assert not write.needs_permission and not search.needs_permission
    out = await write.run(write.parse_args({"content": "We deploy with fly.io"}), ctx)
    assert out.content == "Remembered as m1 (semantic)."
    again = await write.run(write.parse_args({"content": "we deploy with fly.io!"}), ctx)
    assert "merged" in str(again.content)
    found = await search.run(search.parse_args({"query": "deploying"}), ctx)
    assert "[m1] (semantic" in str(found.content) and "from model" in str(found.content)
    none = await search.run(search.parse_args({"query": "kubernetes"}), ctx)
    assert "No memories" in str(none.content)
    with pytest.raises(ToolError, match="kind"):
        write.parse_args({"content": "x", "kind": "fact"})
    assert "MemorySearch" in search.spec().name and search.description


async def test_tools_without_memory_say_it_is_off(project: Path, aistack_home: Path) -> None:
    with pytest.raises(ToolError, match="turned off"):
        await MemorySearchTool().run(MemorySearchTool().parse_args({"query": "x"}),
                                     _ctx(project, aistack_home, None))


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    memory_cmd.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["memory", *argv])


async def test_cli_add_list_search_pin_edit_forget_export_import(
    aistack_home: Path, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def run(*argv: str) -> tuple[int, str, str]:
        code = await memory_cmd.run(_parse(*argv), aistack_home, project)
        out, err = capsys.readouterr()
        return code, out, err

    assert await run("add", "Always", "use", "pnpm") == (0, "remembered as m1\n", "")
    code, out, _ = await run("list")
    assert code == 0 and "m1" in out and "semantic" in out and "Always use pnpm" in out
    code, out, _ = await run("search", "pnpm")
    assert "Always use pnpm" in out
    assert (await run("pin", "m1"))[1] == "pinned m1\n"
    assert "[pinned]" in (await run("list"))[1]
    assert "Always use yarn" in (await run("edit", "1", "Always", "use", "yarn"))[1]
    export = tmp_path / "mem.jsonl"
    assert (await run("export", str(export)))[0] == 0
    assert (await run("forget", "m1"))[1] == "forgot m1\n"
    assert "no memories yet" in (await run("list"))[1]
    assert (await run("import", str(export)))[1].startswith("imported 1 memories")
    assert "Always use yarn" in (await run("list"))[1]


async def test_cli_bad_input_is_one_line_exit_2(
    aistack_home: Path, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (("forget", "abc"), ("forget", "99"), ("import", str(tmp_path / "none")),
                 ("add", "--kind", "fact", "x")):
        code = await memory_cmd.run(_parse(*argv), aistack_home, project)
        err = capsys.readouterr().err
        assert code == 2, argv
        assert err.startswith("aistack memory: ") and err.count("\n") == 1, err
