"""The TUI draws an edit's `FileDiff` from its typed lines: side-by-side pairing, the
unified view, and the diff travelling from the event to the tool card as data."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aistack_tui.agent import events as ev
from aistack_tui.llm import types as lt
from aistack_tui.tools.base import ToolCallDisplay
from aistack_tui.tools.diffs import file_diff
from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.diff_view import (
    ADDED,
    REMOVED,
    SIDE_BY_SIDE_MIN_WIDTH,
    Row,
    render_diff,
    side_by_side_rows,
    unified_text,
)
from aistack_tui.tui.widgets.entries import ToolEntry
from aistack_tui.tui.widgets.tool_card import ToolCard
from tests.tui.test_renderer import RendererHost


def test_side_by_side_pairs_each_removed_run_with_the_added_run_after_it() -> None:
    old = "one\ntwo\nthree\nfour\n" + "".join(f"k{i}\n" for i in range(10)) + "tail\n"
    new = "one\n2\n3\n3b\nfour\n" + "".join(f"k{i}\n" for i in range(10)) + "end\n"
    assert side_by_side_rows(file_diff("f.py", old, new, context=1)) == [
        Row(None, "@@ -1,4 +1,5 @@", None, None, "hunk"),
        Row(1, "one", 1, "one", "context"),
        Row(2, "two", 2, "2", "change"),
        Row(3, "three", 3, "3", "change"),
        Row(None, None, 4, "3b", "change"),
        Row(4, "four", 5, "four", "context"),
        Row(None, "@@ -14,2 +15,2 @@", None, None, "hunk"),
        Row(14, "k9", 15, "k9", "context"),
        Row(15, "tail", 16, "end", "change"),
    ]


def test_side_by_side_keeps_lines_that_look_like_diff_headers() -> None:
    """A removed `-- x` reads `--- x` in unified text; from data it is just a line."""
    rows = side_by_side_rows(file_diff("f", "-- x\nb", "++ y\nb"))
    assert rows[1:] == [Row(1, "-- x", 1, "++ y", "change"), Row(2, "b", 2, "b", "context")]


def test_unified_view_is_the_cores_text_coloured_by_kind() -> None:
    diff = file_diff("src/a.py", "a\nb\nc", "a\nB\nc\n")
    text = unified_text(diff)
    assert text.plain + "\n" == diff.unified()
    styles = {text.plain[s.start:s.end]: str(s.style) for s in text.spans}
    assert styles["-b"] == REMOVED and styles["+B"] == ADDED
    assert styles["-c"] == REMOVED and styles["+c"] == ADDED


def test_render_diff_is_side_by_side_only_when_wide() -> None:
    diff = file_diff("f", "a\n", "b\n")
    assert isinstance(render_diff(diff, SIDE_BY_SIDE_MIN_WIDTH - 1), Text)
    wide = render_diff(diff, SIDE_BY_SIDE_MIN_WIDTH)
    assert isinstance(wide, Table)
    console = Console(width=SIDE_BY_SIDE_MIN_WIDTH, record=True)
    console.print(wide)
    line = next(ln for ln in console.export_text().splitlines() if " a" in ln)
    assert line.split() == ["1", "a", "1", "b"]


async def test_the_diff_reaches_the_tool_card_as_data() -> None:
    diff = file_diff("calc.py", "x = 1\n", "x = 2\n")
    app = RendererHost()
    async with app.run_test() as pilot:
        r = app.renderer()
        await r.handle(ev.ToolCallRequested("t1", "Edit", {"file_path": "calc.py"},
                                            ToolCallDisplay("Edit calc.py", diff=diff)))
        await r.handle(ev.ToolFinished(
            "t1", "Edit", lt.ToolResultBlock(tool_use_id="t1", content="Edited"), 0.1,
            ToolCallDisplay("Edited calc.py (+1 -1)", diff=diff)))
        await pilot.pause()
        entry = app.query_one(Conversation).transcript.by_tool_id["t1"]
        assert isinstance(entry, ToolEntry)
        assert entry.diff is diff
        card = app.query_one(ToolCard)
        assert "▸" in card.summary_line().plain  # a body to open
        body = card.body()
        assert body is not None
        console = Console(width=80, record=True)
        console.print(body)
        assert "-x = 1\n+x = 2" in console.export_text()
