from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.tools.base import Tool, ToolContext, ToolError
from aistack_tui.tools.glob import GlobTool
from aistack_tui.tools.grep import GrepTool
from aistack_tui.tools.ls import LSTool


async def call(tool: Tool[Any], ctx: ToolContext, **raw: object) -> str:
    out = await tool.run(tool.parse_args(raw), ctx)
    assert isinstance(out.content, str)
    return out.content


@pytest.fixture
def tree(project: Path) -> Path:
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".gitignore").write_text("build/\n*.log\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("def main():\n    print('Hello')\n    return 0\n")
    (project / "src" / "util.py").write_text("HELLO = 1\nhello = 2\n")
    (project / "src" / "web.ts").write_text("const hello = 'x';\n")
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text("hello = 'generated'\n")
    (project / "debug.log").write_text("hello log\n")
    (project / "README.md").write_text("# hello\n")
    base = 1_700_000_000
    for i, name in enumerate(["src/util.py", "src/web.ts", "README.md", "src/app.py"]):
        os.utime(project / name, (base + i * 100, base + i * 100))
    return project


async def test_glob_sorts_newest_first_and_respects_gitignore(ctx: ToolContext, tree: Path) -> None:
    text = await call(GlobTool(), ctx, pattern="**/*.py")
    assert text.splitlines() == [str(tree / "src/app.py"), str(tree / "src/util.py")]


async def test_glob_with_path_and_absolute_pattern(ctx: ToolContext, tree: Path) -> None:
    assert await call(GlobTool(), ctx, pattern="*.ts", path="src") == str(tree / "src/web.ts")
    tool = GlobTool()
    args = tool.parse_args({"pattern": f"{tree}/src/*.ts"})
    assert tool.path_argument(args) == f"{tree}/src"
    assert await call(tool, ctx, pattern=f"{tree}/src/*.ts") == str(tree / "src/web.ts")


async def test_glob_no_match_and_missing_dir(ctx: ToolContext, tree: Path) -> None:
    assert await call(GlobTool(), ctx, pattern="**/*.rs") == "No files found"
    with pytest.raises(ToolError, match="does not exist"):
        await call(GlobTool(), ctx, pattern="*", path="nope")


async def test_glob_caps_results(ctx: ToolContext, project: Path) -> None:
    for i in range(130):
        (project / f"f{i}.txt").write_text("")
    lines = (await call(GlobTool(), ctx, pattern="*.txt")).splitlines()
    assert len(lines) == 101
    assert "100 most recently modified of 130" in lines[-1]


async def test_grep_files_with_matches_default(ctx: ToolContext, tree: Path) -> None:
    text = await call(GrepTool(), ctx, pattern="hello")
    # gitignored build/ and *.log, and .git, are skipped; newest first
    assert text.splitlines() == ["README.md", "src/web.ts", "src/util.py"]


async def test_grep_case_insensitive_content_with_context(ctx: ToolContext, tree: Path) -> None:
    text = await call(
        GrepTool(),
        ctx,
        pattern="hello",
        path="src/app.py",
        output_mode="content",
        **{"-i": True, "-A": 1},
    )
    assert text.splitlines() == ["src/app.py:2:    print('Hello')", "src/app.py-3-    return 0"]


async def test_grep_glob_type_and_head_limit(ctx: ToolContext, tree: Path) -> None:
    assert await call(GrepTool(), ctx, pattern="hello", glob="*.ts") == "src/web.ts"
    assert await call(GrepTool(), ctx, pattern="hello", type="py") == "src/util.py"
    text = await call(
        GrepTool(), ctx, pattern="hello", output_mode="content", head_limit=1, **{"-i": True}
    )
    assert len(text.split("\n\n")[0].splitlines()) == 1
    assert "head_limit=1" in text


async def test_grep_count_mode(ctx: ToolContext, tree: Path) -> None:
    text = await call(
        GrepTool(), ctx, pattern="hello", path="src", output_mode="count", **{"-i": True}
    )
    assert "src/util.py:2" in text.splitlines()
    assert "Found 4 matches across 3 files." in text


async def test_grep_bad_regex_and_unknown_type_are_clear(ctx: ToolContext, tree: Path) -> None:
    with pytest.raises(ToolError, match="Invalid regular expression"):
        await call(GrepTool(), ctx, pattern="foo(")
    with pytest.raises(ToolError, match="Unknown file type"):
        await call(GrepTool(), ctx, pattern="x", type="nosuchtype")


async def test_grep_no_match_and_outside_cwd(ctx: ToolContext, tree: Path, tmp_path: Path) -> None:
    assert await call(GrepTool(), ctx, pattern="zzz_nothing") == "No matches found"
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("needle\n")
    assert await call(GrepTool(), ctx, pattern="needle", path=str(other)) == str(other / "x.txt")


async def test_grep_pattern_starting_with_dash(ctx: ToolContext, project: Path) -> None:
    (project / "f.txt").write_text("a --flag b\n")
    assert await call(GrepTool(), ctx, pattern="--flag") == "f.txt"


async def test_ls_lists_dirs_first_and_skips_git(ctx: ToolContext, tree: Path) -> None:
    text = await call(LSTool(), ctx, path=".")
    lines = text.splitlines()
    assert lines[0] == f"{tree}/"
    assert [ln.strip() for ln in lines[1:]] == [
        "build/",
        "src/",
        ".gitignore",
        "debug.log",
        "README.md",
    ]


async def test_ls_ignore_patterns_and_errors(ctx: ToolContext, tree: Path) -> None:
    text = await call(LSTool(), ctx, path=str(tree), ignore=["build", "*.md"])
    assert "build/" not in text
    assert "README.md" not in text
    assert "src/" in text
    with pytest.raises(ToolError, match=r"is a file.*Read"):
        await call(LSTool(), ctx, path="README.md")
    with pytest.raises(ToolError, match="does not exist"):
        await call(LSTool(), ctx, path="missing")


async def test_invalid_globs_are_clear(ctx: ToolContext, tree: Path) -> None:
    with pytest.raises(ToolError, match="Invalid glob pattern"):
        await call(GlobTool(), ctx, pattern="{a,")
    with pytest.raises(ToolError, match="Invalid glob"):
        await call(GrepTool(), ctx, pattern="x", glob="[")
