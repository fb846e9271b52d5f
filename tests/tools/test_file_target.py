"""File tools resolve their path once, beneath the project, and write what was checked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.beneath import UnsafePath, locate, read_beneath
from aistack_tui.tools.base import Tool, ToolContext, ToolError, checked_path
from aistack_tui.tools.edit import EditTool
from aistack_tui.tools.read import ReadTool
from aistack_tui.tools.write import WriteTool


async def call(tool: Tool[Any], ctx: ToolContext, **raw: object) -> str:
    out = await tool.run(tool.parse_args(raw), ctx)
    assert isinstance(out.content, str)
    return out.content


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    return d


async def test_write_through_a_symlink_leaving_the_project_is_refused(
    ctx: ToolContext, project: Path, outside: Path
) -> None:
    (project / "x").symlink_to(outside / ".bashrc")
    with pytest.raises(ToolError, match=r"outside .*nothing was written"):
        await call(WriteTool(), ctx, file_path="x", content="evil\n")
    assert not (outside / ".bashrc").exists()


async def test_write_below_a_directory_symlink_leaving_the_project_is_refused(
    ctx: ToolContext, project: Path, outside: Path
) -> None:
    (project / "d").symlink_to(outside)
    with pytest.raises(ToolError, match="refused"):
        await call(WriteTool(), ctx, file_path="d/.gitconfig", content="evil\n")
    assert list(outside.iterdir()) == []


async def test_dotdot_out_of_the_project_must_arrive_where_the_check_looked(
    ctx: ToolContext, project: Path, outside: Path
) -> None:
    real = outside.resolve() / "new.txt"
    token = checked_path.set(project.resolve() / "new.txt")  # judged something else
    try:
        with pytest.raises(ToolError, match="changed while the call waited"):
            await call(WriteTool(), ctx, file_path="../outside/new.txt", content="x\n")
        assert not real.exists()
    finally:
        checked_path.reset(token)
    token = checked_path.set(real)
    try:
        await call(WriteTool(), ctx, file_path="../outside/new.txt", content="x\n")
    finally:
        checked_path.reset(token)
    assert real.read_text() == "x\n"


async def test_symlink_inside_the_project_is_still_followed(
    ctx: ToolContext, project: Path
) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "AGENTS.md").write_text("one\n")
    (project / "CLAUDE.md").symlink_to("docs/AGENTS.md")
    await call(ReadTool(), ctx, file_path="docs/AGENTS.md")
    await call(WriteTool(), ctx, file_path="CLAUDE.md", content="two\n")
    assert (project / "docs" / "AGENTS.md").read_text() == "two\n"
    assert (project / "CLAUDE.md").is_symlink()


async def test_a_path_that_changed_since_the_check_is_not_written(
    ctx: ToolContext, project: Path
) -> None:
    (project / ".git").mkdir()
    config = project / ".git" / "config"
    config.write_text("[core]\n")
    (project / "y").symlink_to(".git/config")  # swapped in after the check judged ./y
    await call(ReadTool(), ctx, file_path=".git/config")
    token = checked_path.set(project.resolve() / "y")
    try:
        with pytest.raises(ToolError, match=r"y changed while the call waited: .*\.git/config"):
            await call(WriteTool(), ctx, file_path="y", content="evil\n")
        with pytest.raises(ToolError, match="changed while the call waited"):
            await call(EditTool(), ctx, file_path="y", old_string="core", new_string="x")
    finally:
        checked_path.reset(token)
    assert config.read_text() == "[core]\n"


def test_a_symlink_planted_after_the_walk_is_replaced_not_followed(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (outside / "target").write_text("keep\n")
    with locate(root, ["f"]) as found:
        (root / "f").symlink_to(outside / "target")
        found.write(b"new\n")
    assert (outside / "target").read_text() == "keep\n"
    assert not (root / "f").is_symlink()
    assert (root / "f").read_text() == "new\n"


def test_a_directory_swapped_for_a_link_after_the_walk_keeps_the_write_inside(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    with locate(root, ["a", "f"]) as found:
        (root / "a").rename(root / "a2")
        (root / "a").symlink_to(outside)
        found.write(b"data\n")
    assert list(outside.iterdir()) == []
    assert (root / "a2" / "f").read_text() == "data\n"


def test_reads_refuse_links_out_magic_links_and_special_files(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (outside / "secret").write_text("s3cret\n")
    (root / "out").symlink_to(outside / "secret")
    (root / "env").symlink_to("/proc/self/environ")
    (root / "up").symlink_to("../outside/secret")
    os.mkfifo(root / "fifo")
    for name in ("out", "env", "up", "fifo"):
        with pytest.raises(UnsafePath):
            read_beneath(root / name, [root])
    (root / "in").symlink_to("sub/../real")
    (root / "sub").mkdir()
    (root / "real").write_text("ok\n")
    assert read_beneath(root / "in", [root]) == b"ok\n"
    assert read_beneath(root / "real", [root], max_bytes=1) == b"o"


def test_no_follow_walks_refuse_every_symlink_on_the_way(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "link").symlink_to("real")
    with pytest.raises(UnsafePath, match="symlink"):
        locate(root, ["link", "f"], follow=False)
    with locate(root, ["link"], follow=False) as found:
        assert found.kind == "symlink"
        found.remove()
    assert (root / "real").is_dir()
    assert not (root / "link").exists()


async def test_read_through_a_symlink_leaving_the_project_is_refused(
    ctx: ToolContext, project: Path, outside: Path
) -> None:
    (outside / "secret").write_text("s3cret\n")
    (project / "x").symlink_to(outside / "secret")
    with pytest.raises(ToolError, match="nothing was read"):
        await call(ReadTool(), ctx, file_path="x")
    token = checked_path.set(project.resolve() / "other")
    try:
        with pytest.raises(ToolError, match="changed while the call waited"):
            await call(ReadTool(), ctx, file_path=str(outside / "secret"))
    finally:
        checked_path.reset(token)


def test_dots_and_trailing_slashes_in_links_walk_like_the_kernel(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f").write_text("f\n")
    (root / "dirlink").symlink_to("sub/")
    (root / "dot").symlink_to(".")
    assert read_beneath(root / "dirlink" / "f", [root]) == b"f\n"
    assert read_beneath(root / "dot" / "sub" / "." / "f", [root]) == b"f\n"
    with pytest.raises(IsADirectoryError):
        locate(root, ["sub", ".."])
    with pytest.raises(UnsafePath, match="directory"):
        locate(root, ["dot"])
    with locate(root, ["new", "deeper", "file"]) as found:
        assert found.kind == "missing" and found.missing == ["new", "deeper"]
        found.write(b"x")
    assert (root / "new" / "deeper" / "file").read_bytes() == b"x"
