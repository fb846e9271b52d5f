"""A long notice line continues under its own indent, not at column 0 (/help at 80x24)."""

from __future__ import annotations

from aistack_tui.tui.hanging import HANG, hang_wrap
from aistack_tui.tui.widgets.messages import NoticeMessage
from tests.tui.test_app import type_and_send
from tests.tui.test_interaction import ready

HELP_LINE = "  /doctor — Check keys, providers, storage, ripgrep, the sandbox, settings and files"


def test_a_long_line_continues_under_its_indent_plus_the_hang() -> None:
    wrapped = hang_wrap(f"Commands:\n{HELP_LINE}\n  /exit — Quit aistack", 60)
    lines = wrapped.split("\n")
    assert lines[0] == "Commands:" and lines[-1] == "  /exit — Quit aistack"
    assert lines[1].startswith("  /doctor — Check") and len(lines[1]) <= 60
    continuation = lines[2:-1]
    assert continuation and all(line.startswith(" " * (2 + HANG)) for line in continuation)
    assert " ".join(line.strip() for line in lines[1:-1]) == HELP_LINE.strip()


def test_the_first_line_leaves_room_for_the_icon_and_narrow_widths_are_left_alone() -> None:
    text = "word " * 20
    assert all(len(line) <= 38 for line in hang_wrap(text, 40, 38).split("\n")[:1])
    assert hang_wrap(text, 10) == text, "too narrow to arrange: the terminal wraps it"
    assert hang_wrap("a " + "x" * 90, 40).split("\n") == ["a", " " * HANG + "x" * 90]
    table = "Tokens\t 1,200  \nCost:   $0.0027"
    assert hang_wrap(table, 40) == table, "lines that fit stay exactly as written"


async def test_help_at_80_columns_keeps_each_description_under_its_command(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/help")
        await pilot.pause()
        notice = list(app.query(NoticeMessage))[-1]
        width = notice.content_size.width
        rows = [strip.text.rstrip() for strip in notice.render_lines(notice.region.reset_offset)]
        rows = [row for row in rows if row.strip()]
        doctor = next(i for i, row in enumerate(rows) if row.lstrip().startswith("/doctor"))
        assert rows[doctor + 1].startswith(" " * (2 + HANG)), rows[doctor : doctor + 2]
        assert all(row.startswith((" ", "ℹ", "Keys:")) for row in rows), rows
        assert all(len(row) <= width for row in rows)
        await pilot.resize_terminal(120, 24)
        await pilot.pause()
        wide = [strip.text.rstrip() for strip in notice.render_lines(notice.region.reset_offset)]
        assert any(row.lstrip().startswith("/doctor") and row.endswith("files") for row in wide)
