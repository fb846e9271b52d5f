from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.tools.base import Tool, ToolContext, ToolError
from aistack_tui.tools.edit import EditTool, MultiEditTool
from aistack_tui.tools.read import ReadTool
from aistack_tui.tools.write import WriteTool


async def call(tool: Tool[Any], ctx: ToolContext, **raw: object) -> str:
    out = await tool.run(tool.parse_args(raw), ctx)
    assert isinstance(out.content, str)
    return out.content


async def read(ctx: ToolContext, path: str) -> None:
    await call(ReadTool(), ctx, file_path=path)


def touch_later(path: Path) -> None:
    """Change mtime deterministically (no sleeping for the clock to tick)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


async def test_write_creates_a_new_file_with_parents(ctx: ToolContext, project: Path) -> None:
    text = await call(WriteTool(), ctx, file_path="pkg/sub/new.py", content="x = 1\n")
    assert (project / "pkg/sub/new.py").read_text() == "x = 1\n"
    assert "Created" in text
    # The agent now knows the file: an edit right after needs no Read.
    await call(EditTool(), ctx, file_path="pkg/sub/new.py", old_string="1", new_string="2")
    assert (project / "pkg/sub/new.py").read_text() == "x = 2\n"


async def test_write_over_an_unread_file_is_refused(ctx: ToolContext, project: Path) -> None:
    (project / "a.txt").write_text("keep\n")
    with pytest.raises(ToolError, match=r"not been read.*Read it first"):
        await call(WriteTool(), ctx, file_path="a.txt", content="new\n")
    assert (project / "a.txt").read_text() == "keep\n"


async def test_write_refused_when_file_changed_since_read(ctx: ToolContext, project: Path) -> None:
    f = project / "a.txt"
    f.write_text("v1\n")
    await read(ctx, "a.txt")
    f.write_text("v2 by the user\n")
    touch_later(f)
    with pytest.raises(ToolError, match="modified since it was read"):
        await call(WriteTool(), ctx, file_path="a.txt", content="agent\n")
    assert f.read_text() == "v2 by the user\n"


async def test_write_keeps_crlf_and_preview_shows_the_diff(ctx: ToolContext, project: Path) -> None:
    f = project / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\n")
    await read(ctx, "w.txt")
    tool = WriteTool()
    args = tool.parse_args({"file_path": "w.txt", "content": "one\nthree\n"})
    display = await tool.preview(args, ctx)
    assert display.diff is not None
    assert [(ln.kind, ln.text) for ln in display.diff.lines()] == [
        ("context", "one"), ("removed", "two"), ("added", "three")]
    assert f.read_bytes() == b"one\r\ntwo\r\n"  # preview writes nothing
    await tool.run(args, ctx)
    assert f.read_bytes() == b"one\r\nthree\r\n"


async def test_edit_replaces_a_unique_string(ctx: ToolContext, project: Path) -> None:
    f = project / "m.py"
    f.write_text("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    await read(ctx, "m.py")
    text = await call(
        EditTool(), ctx, file_path="m.py", old_string="return 2", new_string="return 3"
    )
    assert f.read_text().endswith("return 3\n")
    assert "return 3" in text  # the model sees the result around the change
    # a second edit works without re-reading: the tool recorded its own write
    await call(EditTool(), ctx, file_path="m.py", old_string="return 1", new_string="return 0")
    assert "return 0" in f.read_text()


async def test_edit_not_unique_says_how_many(ctx: ToolContext, project: Path) -> None:
    f = project / "d.py"
    f.write_text("x = 1\nx = 1\nx = 1\n")
    await read(ctx, "d.py")
    with pytest.raises(ToolError, match=r"matches 3 times.*replace_all"):
        await call(EditTool(), ctx, file_path="d.py", old_string="x = 1", new_string="x = 2")
    await call(
        EditTool(), ctx, file_path="d.py", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert f.read_text() == "x = 2\nx = 2\nx = 2\n"


async def test_edit_not_found_and_identical_strings(ctx: ToolContext, project: Path) -> None:
    f = project / "d.py"
    f.write_text("def f():\n    pass\n")
    await read(ctx, "d.py")
    with pytest.raises(ToolError, match=r"not found.*whitespace.*line 1"):
        await call(EditTool(), ctx, file_path="d.py", old_string="def f():\n  pass", new_string="")
    with pytest.raises(ToolError, match="identical"):
        await call(EditTool(), ctx, file_path="d.py", old_string="pass", new_string="pass")


async def test_edit_without_read_is_refused(ctx: ToolContext, project: Path) -> None:
    (project / "u.py").write_text("a\n")
    with pytest.raises(ToolError, match="Read it first"):
        await call(EditTool(), ctx, file_path="u.py", old_string="a", new_string="b")


async def test_edit_refused_after_external_change(ctx: ToolContext, project: Path) -> None:
    f = project / "c.py"
    f.write_text("a = 1\n")
    await read(ctx, "c.py")
    f.write_text("a = 1  # user\n")
    with pytest.raises(ToolError, match="modified since it was read"):
        await call(EditTool(), ctx, file_path="c.py", old_string="a = 1", new_string="a = 2")


async def test_edit_preserves_crlf(ctx: ToolContext, project: Path) -> None:
    f = project / "win.txt"
    f.write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    await read(ctx, "win.txt")
    await call(EditTool(), ctx, file_path="win.txt", old_string="alpha\nbeta", new_string="A\nB\nC")
    assert f.read_bytes() == b"A\r\nB\r\nC\r\ngamma\r\n"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\ufeffhé\n".encode(), "\ufeffhá\n".encode()),
        ("hé\n".encode("latin-1"), "há\n".encode("latin-1")),
    ],
)
async def test_edit_preserves_encoding(
    ctx: ToolContext, project: Path, raw: bytes, expected: bytes
) -> None:
    f = project / "enc.txt"
    f.write_bytes(raw)
    await read(ctx, "enc.txt")
    await call(EditTool(), ctx, file_path="enc.txt", old_string="hé", new_string="há")
    assert f.read_bytes() == expected


async def test_edit_keeps_file_mode(ctx: ToolContext, project: Path) -> None:
    f = project / "run.sh"
    f.write_text("echo a\n")
    f.chmod(0o755)
    await read(ctx, "run.sh")
    await call(EditTool(), ctx, file_path="run.sh", old_string="a", new_string="b")
    assert f.stat().st_mode & 0o777 == 0o755


async def test_edit_of_missing_file_suggests_write(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"does not exist.*Write"):
        await call(EditTool(), ctx, file_path="nope.py", old_string="a", new_string="b")


async def test_multiedit_applies_in_order(ctx: ToolContext, project: Path) -> None:
    f = project / "m.py"
    f.write_text("a = 1\nb = 2\n")
    await read(ctx, "m.py")
    await call(
        MultiEditTool(),
        ctx,
        file_path="m.py",
        edits=[
            {"old_string": "a = 1", "new_string": "a = 10"},
            {"old_string": "a = 10\nb", "new_string": "a = 10\nc"},
        ],
    )
    assert f.read_text() == "a = 10\nc = 2\n"


async def test_multiedit_is_all_or_nothing(ctx: ToolContext, project: Path) -> None:
    f = project / "m.py"
    f.write_text("a = 1\nb = 2\n")
    await read(ctx, "m.py")
    with pytest.raises(ToolError, match=r"Edit 2 of 2: .*not found.*No edits were applied"):
        await call(
            MultiEditTool(),
            ctx,
            file_path="m.py",
            edits=[
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "zzz", "new_string": "y"},
            ],
        )
    assert f.read_text() == "a = 1\nb = 2\n"


async def test_multiedit_can_create_a_file(ctx: ToolContext, project: Path) -> None:
    await call(
        MultiEditTool(),
        ctx,
        file_path="fresh.py",
        edits=[{"old_string": "", "new_string": "x = 1\n"}, {"old_string": "1", "new_string": "2"}],
    )
    assert (project / "fresh.py").read_text() == "x = 2\n"


async def test_edit_preview_is_the_exact_diff_without_writing(
    ctx: ToolContext, project: Path
) -> None:
    f = project / "p.py"
    f.write_text("a\nb\nc\n")
    await read(ctx, "p.py")
    tool = EditTool()
    args = tool.parse_args({"file_path": "p.py", "old_string": "b", "new_string": "B"})
    display = await tool.preview(args, ctx)
    assert display.diff is not None
    assert display.diff.unified() == "--- a/p.py\n+++ b/p.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    assert f.read_text() == "a\nb\nc\n"
    out = await tool.run(args, ctx)
    assert out.display is not None
    assert out.display.diff == display.diff


async def test_edit_through_a_symlink_changes_the_target(ctx: ToolContext, project: Path) -> None:
    target = project / "real.txt"
    target.write_text("one\n")
    (project / "link.txt").symlink_to(target)
    await read(ctx, "link.txt")
    await call(EditTool(), ctx, file_path="link.txt", old_string="one", new_string="two")
    assert target.read_text() == "two\n"
    assert (project / "link.txt").is_symlink()


async def test_write_preview_of_a_new_file(ctx: ToolContext, project: Path) -> None:
    tool = WriteTool()
    args = tool.parse_args({"file_path": "docs/new.md", "content": "# Title\nbody\n"})
    display = await tool.preview(args, ctx)
    assert display.summary == "Create docs/new.md (2 lines)"
    assert display.diff is not None
    assert (
        display.diff.unified()
        == "--- a/docs/new.md\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# Title\n+body\n"
    )
    assert not (project / "docs").exists()


async def test_edit_preview_raises_the_same_error_run_would(
    ctx: ToolContext, project: Path
) -> None:
    (project / "x.py").write_text("a\n")
    tool = EditTool()
    args = tool.parse_args({"file_path": "x.py", "old_string": "a", "new_string": "b"})
    with pytest.raises(ToolError, match="Read it first"):
        await tool.preview(args, ctx)
