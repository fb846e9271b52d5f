"""Diffs as data: `file_diff` itself, and the `FileDiff` Edit, Write and MultiEdit hand
to the front ends (what the confirm dialog shows is what lands on disk)."""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path
from typing import Any, Protocol

import pytest

from aistack_tui.tools.base import ToolCallDisplay, ToolContext, ToolError, ToolOutput
from aistack_tui.tools.diffs import DiffStat, FileDiff, file_diff
from aistack_tui.tools.edit import EditTool, MultiEditTool
from aistack_tui.tools.files import record_read
from aistack_tui.tools.read import ReadTool
from aistack_tui.tools.write import WriteTool


class FileTool(Protocol):
    """Edit, MultiEdit and Write: the tools whose preview carries a diff."""

    def parse_args(self, raw: dict[str, Any]) -> Any: ...
    async def preview(self, args: Any, ctx: ToolContext) -> ToolCallDisplay: ...
    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput: ...


def rows(diff: FileDiff) -> list[tuple[str, str, int | None, int | None]]:
    return [(ln.kind, ln.text, ln.old_lineno, ln.new_lineno) for ln in diff.lines()]


# --- file_diff ---------------------------------------------------------------------------


def test_unified_text_matches_difflib_for_a_simple_change() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 10\n", "line ten\n").replace("line 20\n", "line 20\nline 21\n")
    theirs = "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/a.txt", "b/a.txt", n=3)
    )
    assert file_diff("a.txt", old, new).unified() == theirs


def test_no_change_is_an_empty_false_diff() -> None:
    diff = file_diff("x", "same\n", "same\n")
    assert not diff
    assert diff.hunks == ()
    assert diff.unified() == ""
    assert diff.stat() == DiffStat(0, 0)


def test_hunks_number_lines_on_both_sides() -> None:
    (hunk,) = file_diff("f", "a\nb\nc\nd\n", "a\nB\nc\nd\ne\n", context=1).hunks
    assert [(ln.kind, ln.text, ln.old_lineno, ln.new_lineno) for ln in hunk.lines] == [
        ("context", "a", 1, 1),
        ("removed", "b", 2, None),
        ("added", "B", None, 2),
        ("context", "c", 3, 3),
        ("context", "d", 4, 4),
        ("added", "e", None, 5),
    ]
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (1, 4, 1, 5)
    assert hunk.header() == "@@ -1,4 +1,5 @@"


def test_missing_newline_at_end_is_marked_on_the_line_and_in_the_text() -> None:
    diff = file_diff("f", "a\nb", "a\nb\n")
    assert [(ln.kind, ln.text, ln.no_newline) for ln in diff.lines()] == [
        ("context", "a", False), ("removed", "b", True), ("added", "b", False)]
    assert diff.unified().splitlines()[-3:] == ["-b", "\\ No newline at end of file", "+b"]


def test_form_feed_does_not_split_lines() -> None:
    diff = file_diff("f", "a\x0cb\n", "a\x0cc\n")
    assert [ln.text for ln in diff.lines()] == ["a\x0cb", "a\x0cc"]


def test_stat_counts_changed_lines_whatever_they_contain() -> None:
    """Lines that read like diff headers (`--- x`, `+++ y` once prefixed) still count:
    the stat comes from the lines' kinds, not from their text."""
    old = "keep\n-- old header\nsame\n"
    new = "keep\n++ new header\nmore\nsame\n"
    diff = file_diff("f", old, new)
    assert diff.stat() == DiffStat(added=2, removed=1)
    assert str(diff.stat()) == "+2 -1"
    assert "--- old header" in diff.unified() and "+++ new header" in diff.unified()
    assert file_diff("f", old, new, context=0).stat() == diff.stat()


def test_a_diff_is_an_immutable_value() -> None:
    diff = file_diff("f", "a\n", "b\n")
    assert diff == file_diff("f", "a\n", "b\n")
    assert hash(diff) == hash(file_diff("f", "a\n", "b\n"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        diff.path = "g"  # type: ignore[misc]


def test_absolute_path_reads_as_a_relative_one_in_the_text() -> None:
    assert file_diff("/tmp/x.txt", "", "a\n").unified().startswith("--- a/tmp/x.txt\n+++ b/tmp/x.txt\n")


# --- the diffs Edit, Write and MultiEdit hand to the front ends ----------------------------


async def read(ctx: ToolContext, path: str) -> None:
    await ReadTool().run(ReadTool().parse_args({"file_path": path}), ctx)


async def preview_and_run(tool: FileTool, ctx: ToolContext, **raw: object) -> FileDiff:
    """The previewed diff, after checking the run reports the very same one."""
    args = tool.parse_args(raw)
    shown = await tool.preview(args, ctx)
    assert shown is not None and shown.diff is not None
    out = await tool.run(args, ctx)
    assert out.display is not None
    assert out.display.diff == shown.diff
    return shown.diff


async def test_write_of_a_new_file_is_all_added_lines(ctx: ToolContext, project: Path) -> None:
    diff = await preview_and_run(WriteTool(), ctx, file_path="pkg/new.py", content="a = 1\nb = 2\n")
    assert diff.path == "pkg/new.py"
    (hunk,) = diff.hunks
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (0, 0, 1, 2)
    assert rows(diff) == [("added", "a = 1", None, 1), ("added", "b = 2", None, 2)]
    assert diff.stat() == DiffStat(2, 0)


async def test_edit_that_deletes_lines(ctx: ToolContext, project: Path) -> None:
    (project / "m.py").write_text("one\ntwo\nthree\nfour\n")
    await read(ctx, "m.py")
    diff = await preview_and_run(EditTool(), ctx, file_path="m.py",
                                 old_string="two\nthree\n", new_string="")
    assert rows(diff) == [
        ("context", "one", 1, 1),
        ("removed", "two", 2, None),
        ("removed", "three", 3, None),
        ("context", "four", 4, 2),
    ]
    assert diff.stat() == DiffStat(0, 2)
    assert (project / "m.py").read_text() == "one\nfour\n"


async def test_edit_of_a_crlf_file_diffs_lines_without_carriage_returns(
    ctx: ToolContext, project: Path
) -> None:
    (project / "w.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    await read(ctx, "w.txt")
    diff = await preview_and_run(EditTool(), ctx, file_path="w.txt",
                                 old_string="beta", new_string="BETA")
    assert rows(diff) == [
        ("context", "alpha", 1, 1),
        ("removed", "beta", 2, None),
        ("added", "BETA", None, 2),
        ("context", "gamma", 3, 3),
    ]
    assert "\r" not in diff.unified()
    assert (project / "w.txt").read_bytes() == b"alpha\r\nBETA\r\ngamma\r\n"


async def test_edit_of_the_last_line_without_a_newline(ctx: ToolContext, project: Path) -> None:
    (project / "n.txt").write_text("a\nb")
    await read(ctx, "n.txt")
    diff = await preview_and_run(EditTool(), ctx, file_path="n.txt", old_string="b", new_string="c")
    assert [(ln.kind, ln.text, ln.no_newline) for ln in diff.lines()] == [
        ("context", "a", False), ("removed", "b", True), ("added", "c", True)]
    assert diff.unified().count("\\ No newline at end of file") == 2


async def test_write_that_adds_the_final_newline(ctx: ToolContext, project: Path) -> None:
    (project / "n.txt").write_text("a\nb")
    await read(ctx, "n.txt")
    diff = await preview_and_run(WriteTool(), ctx, file_path="n.txt", content="a\nb\n")
    assert [(ln.kind, ln.text, ln.no_newline) for ln in diff.lines()] == [
        ("context", "a", False), ("removed", "b", True), ("added", "b", False)]
    assert diff.stat() == DiffStat(1, 1)


async def test_write_of_the_same_text_has_an_empty_diff(ctx: ToolContext, project: Path) -> None:
    (project / "s.txt").write_text("same\n")
    await read(ctx, "s.txt")
    args = WriteTool().parse_args({"file_path": "s.txt", "content": "same\n"})
    display = await WriteTool().preview(args, ctx)
    assert display.diff is not None and not display.diff


async def test_multiedit_far_apart_gives_two_hunks_and_the_summary_stat(
    ctx: ToolContext, project: Path
) -> None:
    (project / "big.py").write_text("".join(f"x{i}\n" for i in range(1, 31)))
    await read(ctx, "big.py")
    tool = MultiEditTool()
    raw = {"file_path": "big.py", "edits": [{"old_string": "x2\n", "new_string": "two\n"},
                                            {"old_string": "x28\n", "new_string": ""}]}
    display = await tool.preview(tool.parse_args(raw), ctx)
    assert display.diff is not None
    assert [h.header() for h in display.diff.hunks] == ["@@ -1,5 +1,5 @@", "@@ -25,6 +25,5 @@"]
    assert display.diff.stat() == DiffStat(1, 2)
    assert display.summary == "MultiEdit big.py (+1 -2)"


@pytest.mark.parametrize("tool", [EditTool(), WriteTool()])
async def test_binary_files_are_refused_before_any_diff(
    tool: FileTool, ctx: ToolContext, project: Path
) -> None:
    (project / "img.bin").write_bytes(b"\x89PNG\x00\x01\x02old")
    record_read(ctx, project / "img.bin")  # Read refuses binaries; be sure freshness passes
    raw: dict[str, object] = {"file_path": "img.bin", "content": "text\n"}
    if isinstance(tool, EditTool):
        raw = {"file_path": "img.bin", "old_string": "old", "new_string": "new"}
    with pytest.raises(ToolError, match="binary file"):
        await tool.preview(tool.parse_args(raw), ctx)
    assert (project / "img.bin").read_bytes() == b"\x89PNG\x00\x01\x02old"
