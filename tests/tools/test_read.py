from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest

from aistack_tui.llm.types import ImageBlock, TextBlock
from aistack_tui.tools.base import ToolContext, ToolError
from aistack_tui.tools.read import ReadTool

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def read(ctx: ToolContext, **raw: object) -> str:
    tool = ReadTool()
    out = await tool.run(tool.parse_args(raw), ctx)
    assert isinstance(out.content, str)
    return out.content


async def test_read_numbers_lines_like_cat_n_and_records_the_read(
    ctx: ToolContext, project: Path
) -> None:
    f = project / "a.py"
    f.write_text("import os\n\nprint(1)\n")
    text = await read(ctx, file_path="a.py")
    assert text == "     1\timport os\n     2\t\n     3\tprint(1)"
    st = f.stat()
    record = ctx.read_files[f.resolve()]
    assert (record.mtime_ns, record.size) == (st.st_mtime_ns, st.st_size)


async def test_offset_and_limit_page_and_say_how_to_continue(
    ctx: ToolContext, project: Path
) -> None:
    (project / "n.txt").write_text("".join(f"row {i}\n" for i in range(1, 101)))
    text = await read(ctx, file_path="n.txt", offset=10, limit=5)
    lines = text.splitlines()
    assert lines[0] == "    10\trow 10"
    assert lines[4] == "    14\trow 14"
    assert "Use offset=15 to read more" in text
    assert "of 100" in text


async def test_long_lines_are_truncated(ctx: ToolContext, project: Path) -> None:
    (project / "wide.txt").write_text("x" * 5000 + "\n")
    text = await read(ctx, file_path="wide.txt")
    assert len(text) < 2200
    assert "line truncated, 5000 chars" in text


async def test_crlf_is_not_shown(ctx: ToolContext, project: Path) -> None:
    (project / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert await read(ctx, file_path="w.txt") == "     1\ta\n     2\tb"


async def test_binary_file_is_refused(ctx: ToolContext, project: Path) -> None:
    (project / "blob").write_bytes(b"\x00\x01\x02binary" * 10)
    with pytest.raises(ToolError, match="binary file"):
        await read(ctx, file_path="blob")
    assert not ctx.read_files


async def test_missing_file_and_directory_give_clear_errors(
    ctx: ToolContext, project: Path
) -> None:
    (project / "config.yaml").write_text("a: 1\n")
    with pytest.raises(ToolError, match=r"does not exist.*Did you mean .*config\.yaml"):
        await read(ctx, file_path="config.yml")
    (project / "src").mkdir()
    with pytest.raises(ToolError, match=r"is a directory.*LS"):
        await read(ctx, file_path="src")


async def test_huge_file_without_limit_is_refused_and_paging_streams(
    ctx: ToolContext, project: Path
) -> None:
    big = project / "big.log"
    with big.open("wb") as f:
        f.write(b"first line\nsecond line\n" + b"filler text line\n" * 1000)
        f.truncate(50 * 1024 * 1024)  # the rest is sparse: instant to create
    with pytest.raises(ToolError, match=r"50\.0 MB.*offset and limit"):
        await read(ctx, file_path="big.log")
    start = time.monotonic()
    text = await read(ctx, file_path="big.log", offset=1, limit=2)
    assert time.monotonic() - start < 2
    assert text.startswith("     1\tfirst line\n     2\tsecond line")
    assert "Use offset=3" in text


async def test_large_text_file_pages_from_the_middle(ctx: ToolContext, project: Path) -> None:
    big = project / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(1, 100_001)))
    assert big.stat().st_size > 256 * 1024
    text = await read(ctx, file_path=str(big), offset=50_000, limit=3)
    assert text.splitlines()[:3] == [
        " 50000\tline 50000",
        " 50001\tline 50001",
        " 50002\tline 50002",
    ]


async def test_image_is_returned_as_an_image_block(ctx: ToolContext, project: Path) -> None:
    (project / "dot.png").write_bytes(PNG_1PX)
    tool = ReadTool()
    out = await tool.run(tool.parse_args({"file_path": "dot.png"}), ctx)
    assert isinstance(out.content, list)
    text, image = out.content
    assert isinstance(text, TextBlock)
    assert isinstance(image, ImageBlock)
    assert image.media_type == "image/png"
    assert base64.b64decode(image.data) == PNG_1PX


async def test_empty_file_and_offset_past_end(ctx: ToolContext, project: Path) -> None:
    (project / "e.txt").write_text("")
    assert "empty" in await read(ctx, file_path="e.txt")
    (project / "s.txt").write_text("one\n")
    with pytest.raises(ToolError, match="past the end"):
        await read(ctx, file_path="s.txt", offset=5)


async def test_latin1_file_is_readable(ctx: ToolContext, project: Path) -> None:
    (project / "l.txt").write_bytes("café\n".encode("latin-1"))
    assert await read(ctx, file_path="l.txt") == "     1\tcafé"
