"""Agent events as lines in a scrolling terminal (the line mode's renderer)."""

from __future__ import annotations

import io
import re

from rich.console import Console

from aistack_tui.agent import events as ev
from aistack_tui.linemode.render import LineRenderer
from aistack_tui.llm import types as lt
from aistack_tui.tools.base import ToolCallDisplay
from aistack_tui.tools.diffs import file_diff

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
DIFF = file_diff("calc.py", "a\nb\n", "a\nc\n")
END = ev.TurnEnded("completed", 1, "", lt.Usage(input_tokens=1200, output_tokens=34),
                   0.0123, 2500, 2000)


def renderer(*, live: bool) -> tuple[LineRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=80, height=24, force_terminal=live,
                      color_system="standard" if live else None,
                      _environ={"TERM": "xterm" if live else "dumb"})
    r = LineRenderer(console)
    r.begin_run()
    return r, out


def plain(out: io.StringIO) -> str:
    """What is left on screen: escape codes gone, trailing padding trimmed."""
    return "\n".join(line.rstrip() for line in ANSI.sub("", out.getvalue()).splitlines())


def stream_text(r: LineRenderer, text: str) -> None:
    for ch in text:
        r.handle(ev.TextDelta(ch))


def test_a_dumb_terminal_gets_the_raw_text_as_it_streams() -> None:
    r, out = renderer(live=False)
    assert not r.live_enabled
    r.handle(ev.TurnStarted(1, "anthropic", "m"))
    stream_text(r, "Hello **wor")
    assert out.getvalue() == "Hello **wor"  # written at once, no escape codes
    stream_text(r, "ld**.")
    r.handle(END)
    lines = out.getvalue().splitlines()
    assert lines[0] == "Hello **world**."
    assert lines[1].startswith("─ 1,200 in · 34 out · $0.0123")


def test_a_real_terminal_gets_each_finished_block_rendered_as_markdown() -> None:
    r, out = renderer(live=True)
    assert r.live_enabled
    r.handle(ev.TurnStarted(1, "anthropic", "m"))
    stream_text(r, "# Plan\n\nFirst **bold** step.\n\n```python\nx = 1\n```\nTail text")
    shown = plain(out)
    assert "First bold step." in shown and "**" not in shown  # rendered, not raw
    assert "x = 1" in shown and "```" not in shown
    r.handle(ev.MessageAdded(lt.Message(role="assistant", content=[
        lt.TextBlock(text="...")])))
    r.handle(END)
    shown = plain(out)
    assert "Tail text" in shown


def test_tool_calls_are_a_line_each_way_and_an_edit_shows_its_diff() -> None:
    r, out = renderer(live=False)
    r.handle(ev.ToolCallRequested("t1", "Edit", {"file_path": "calc.py"},
                                  ToolCallDisplay("Edit calc.py", diff=DIFF)))
    r.handle(ev.ToolStarted("t1", "Edit"))
    r.handle(ev.ToolFinished("t1", "Edit", lt.ToolResultBlock(tool_use_id="t1", content="ok"),
                             0.25, ToolCallDisplay("Edit calc.py", diff=DIFF)))
    lines = plain(out).splitlines()
    assert lines[0] == "● Edit calc.py"
    assert lines[1] == "  ✓ 0.2s"
    assert "    2 -b" in lines and "    2 +c" in lines


def test_an_edit_already_shown_in_the_approval_prompt_is_not_shown_again() -> None:
    r, out = renderer(live=False)
    r.handle(ev.ToolCallRequested("t1", "Edit", {}, ToolCallDisplay("Edit calc.py", diff=DIFF)))
    r.mark_asked("t1")
    r.handle(ev.ToolFinished("t1", "Edit", lt.ToolResultBlock(tool_use_id="t1", content="ok"),
                             0.1, ToolCallDisplay("Edit calc.py", diff=DIFF)))
    assert "-b" not in plain(out)


def test_a_finished_call_away_from_its_header_names_itself_with_its_final_summary() -> None:
    r, out = renderer(live=False)
    r.handle(ev.ToolCallRequested("a", "Read", {}, ToolCallDisplay("Read a.py")))
    r.handle(ev.ToolCallRequested("b", "Grep", {}, ToolCallDisplay('Grep "x"')))
    r.handle(ev.ToolFinished("a", "Read", lt.ToolResultBlock(tool_use_id="a", content="1"),
                             0.0, ToolCallDisplay("Read a.py (12 lines)")))
    r.handle(ev.ToolFinished("b", "Grep", lt.ToolResultBlock(
        tool_use_id="b", content="Error: bad regex\nmore", is_error=True), 0.0))
    assert plain(out).splitlines()[2:] == [
        "  Read a.py (12 lines) ✓ 0.0s",
        '  Grep "x" ✗ Error: bad regex · 0.0s',
    ]


def test_a_denied_call_ends_with_its_reason_once() -> None:
    r, out = renderer(live=False)
    r.handle(ev.ToolCallRequested("t", "Bash", {"command": "rm x"}, ToolCallDisplay("")))
    r.handle(ev.PermissionDecided("t", "Bash", "deny", "The user denied this tool call."))
    r.handle(ev.ToolFinished("t", "Bash", lt.ToolResultBlock(
        tool_use_id="t", content="Permission denied: ...", is_error=True), 0.0))
    assert plain(out).splitlines() == [
        "● Bash rm x",  # no display summary: built from the input
        "  ⊘ denied: The user denied this tool call.",
    ]


def test_an_answer_that_was_not_streamed_is_printed_whole() -> None:
    r, out = renderer(live=False)
    r.handle(ev.TurnStarted(1, "openai", "m"))
    r.handle(ev.MessageAdded(lt.Message(role="assistant", content=[
        lt.TextBlock(text="All in one piece.")])))
    assert plain(out) == "All in one piece."


def test_a_failed_stream_says_the_answer_starts_again() -> None:
    r, out = renderer(live=True)
    r.handle(ev.TurnStarted(1, "anthropic", "m"))
    stream_text(r, "First try.\n\nNot fini")
    r.handle(ev.StreamReset("connection reset", 1, 0.5))
    stream_text(r, "Second try.")
    r.handle(END)
    shown = plain(out)
    assert "retry 1 in 0.5s — the answer starts again" in shown
    assert "Not fini" not in shown  # the unfinished tail was never printed
    assert "Second try." in shown


def test_interrupted_and_stopped_runs_say_so() -> None:
    r, out = renderer(live=False)
    r.handle(ev.TurnEnded("interrupted", 1, "", lt.Usage(), None, 100, 50))
    r.handle(ev.TurnEnded("max_turns", 3, "", lt.Usage(), None, 100, 50,
                          detail="the run reached --max-turns 3"))
    shown = plain(out)
    assert "⚠ interrupted — the partial answer was kept" in shown
    assert "⚠ stopped: the run reached --max-turns 3" in shown


def test_subagent_calls_are_indented_lines_under_their_task() -> None:
    r, out = renderer(live=False)
    r.handle(ev.ToolCallRequested("task", "Task", {}, ToolCallDisplay("Task find tests")))
    child = ev.ToolCallRequested("c1", "Grep", {"pattern": "def test"},
                                 ToolCallDisplay('Grep "def test"'))
    r.handle(ev.SubagentEvent("task", "find tests", child))
    r.handle(ev.SubagentEvent("task", "find tests", ev.TextDelta("child text")))
    assert plain(out).splitlines() == [
        "● Task find tests",
        '    ↳ find tests: Grep "def test"',
    ]


def test_notices_errors_and_attachments() -> None:
    r, out = renderer(live=False)
    r.handle(ev.MessageAdded(lt.Message(role="user", content=[
        lt.TextBlock(text="read this"),
        lt.TextBlock(text='<attached-file path="src/app.py">\nx\n</attached-file>')])))
    r.handle(ev.Notice("MCP server docs failed", "warning"))
    r.handle(ev.ErrorOccurred("401 bad key", "AuthenticationError"))
    assert plain(out).splitlines() == [
        "· attached src/app.py",
        "⚠ MCP server docs failed",
        "✗ AuthenticationError: 401 bad key",
    ]


def test_a_long_diff_is_cut_with_a_count_and_numbers_follow_the_file() -> None:
    from aistack_tui.linemode.diff import render_diff

    old = "".join(f"line {i}\n" for i in range(1, 41))
    new = old.replace("line 20\n", "changed 20\n").replace("line 40\n", "line 40")
    diff = file_diff("big.txt", old, new)
    full = render_diff(diff).plain.splitlines()
    assert full[0] == "@@ -17,7 +17,7 @@"
    assert "   20 -line 20" in full and "   20 +changed 20" in full
    assert full[-1].strip() == "\\ No newline at end of file"
    cut = render_diff(diff, max_lines=5).plain.splitlines()
    assert len(cut) == 6
    assert cut[-1].strip() == f"… {len(full) - 5} more diff lines"
