"""How a tool call stored in a conversation is shown again (a resumed session).

A live card gets its final look from the tool's output (`ToolOutput.display`): the
summary with a path relative to the project, a Read's lines, an edit's diff with the
file's line numbers, a command's exit code. A stored conversation keeps only the call
and the result the model read, so this module rebuilds that look from those two, as
far as they tell: an Edit's result shows the changed lines with their numbers, from
which the diff is rebuilt; a Write that created a file is all its content; a Read's
result is its numbered lines. What cannot be known again (the file before a Write that
overwrote it) is left out rather than guessed.
"""

from __future__ import annotations

import re
from typing import Any

from aistack_tui.tools.base import Tool, ToolCallDisplay, ToolContext, ToolError
from aistack_tui.tools.diffs import DiffLine, FileDiff, Hunk, file_diff
from aistack_tui.tools.files import display_path
from aistack_tui.tools.read import language_for

_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$", re.MULTILINE)
_AROUND = re.compile(r"Result around line \d+:\n")
_EXIT = re.compile(r"\n\nExit code: (-?\d+)\Z|\nExit code: (-?\d+)\Z")
_CREATED = re.compile(r"^Created .* \((\d+) lines\)\.", re.MULTILINE)
_UPDATED = re.compile(r"^Updated .* \(\d+ lines, (\+\d+ -\d+)\)\.", re.MULTILINE)
BASH_SUMMARY_WIDTH = 60


def replay_display(
    tool: Tool[Any], raw_input: dict[str, Any], result: str, is_error: bool, ctx: ToolContext
) -> ToolCallDisplay | None:
    """The card's look for a stored call and its result; None when nothing is known
    beyond the call itself (the front end then shows the result as it is)."""
    try:
        args = tool.parse_args(raw_input)
    except ToolError:
        return None
    described = tool.describe(args)
    if is_error:
        return described
    try:
        match tool.name:
            case "Read":
                return _read(args, result, ctx) or described
            case "Edit" | "MultiEdit":
                return _edit(args, result, ctx)
            case "Write":
                return _write(args, result, ctx) or described
            case "Bash":
                return _bash(args.command, result)
            case _:
                return described
    except (ValueError, OSError):
        return described


def _shown(raw_path: str, ctx: ToolContext) -> str:
    return display_path(ctx.resolve(raw_path), ctx)


def _read(args: Any, result: str, ctx: ToolContext) -> ToolCallDisplay | None:
    shown = _shown(args.file_path, ctx)
    if result.startswith("(The file exists but is empty.)"):
        return ToolCallDisplay(summary=f"Read {shown} (empty)")
    lines = [m[2] for m in _NUMBERED.finditer(result)]
    if not lines:
        return None
    return ToolCallDisplay(summary=f"Read {shown} ({len(lines)} lines)",
                           detail="\n".join(lines), language=language_for(shown))


def _edit(args: Any, result: str, ctx: ToolContext) -> ToolCallDisplay:
    shown = _shown(args.file_path, ctx)
    edits: list[tuple[str, str, bool]] = (
        [(e.old_string, e.new_string, e.replace_all) for e in args.edits]
        if hasattr(args, "edits") else [(args.old_string, args.new_string, args.replace_all)]
    )
    diff = _diff_in_place(shown, edits, result) or file_diff(
        shown, "\n".join(old for old, _, _ in edits) + "\n",
        "\n".join(new for _, new, _ in edits) + "\n",
    )
    verb = "Created" if result.startswith("Created") else "Edited"
    return ToolCallDisplay(summary=f"{verb} {shown} ({diff.stat()})", diff=diff)


def _diff_in_place(shown: str, edits: list[tuple[str, str, bool]], result: str
                   ) -> FileDiff | None:
    """The diff with the file's own line numbers and context, from the numbered lines
    around the change that the Edit's result shows; None when they do not hold it all."""
    around = _AROUND.search(result)
    if around is None:
        return None
    rows = [(int(m[1]), m[2]) for m in _NUMBERED.finditer(result, around.end())]
    if not rows:
        return None
    first = rows[0][0]
    new = "".join(text + "\n" for _, text in rows)
    old = new
    for old_string, new_string, replace_all in reversed(edits):
        if not new_string or new_string not in old:
            return None
        old = old.replace(new_string, old_string, -1 if replace_all else 1)
    region = file_diff(shown, old, new)
    return FileDiff(shown, tuple(_shift(h, first - 1) for h in region.hunks))


def _shift(hunk: Hunk, by: int) -> Hunk:
    def line(d: DiffLine) -> DiffLine:
        return DiffLine(d.kind, d.text, d.old_lineno + by if d.old_lineno else None,
                        d.new_lineno + by if d.new_lineno else None, d.no_newline)

    return Hunk(hunk.old_start + by, hunk.old_count, hunk.new_start + by, hunk.new_count,
                tuple(line(d) for d in hunk.lines))


def _write(args: Any, result: str, ctx: ToolContext) -> ToolCallDisplay | None:
    shown = _shown(args.file_path, ctx)
    created = _CREATED.search(result)
    if created is not None:
        return ToolCallDisplay(summary=f"Created {shown} ({created[1]} lines)",
                               diff=file_diff(shown, "", args.content))
    updated = _UPDATED.search(result)
    if updated is not None:  # what the file held before is not known any more
        return ToolCallDisplay(summary=f"Wrote {shown} ({updated[1]})")
    return None


def _bash(command: str, result: str) -> ToolCallDisplay:
    line = command.strip().split("\n", 1)[0]
    more = " …" if "\n" in command.strip() else ""
    if len(line) > BASH_SUMMARY_WIDTH:
        line, more = line[: BASH_SUMMARY_WIDTH - 1] + "…", ""
    summary = f"Bash {line}{more}"
    text = result
    code = _EXIT.search(result)
    if code is not None:
        summary += f" (exit {code[1] or code[2]})"
        text = result[: code.start()]
    if text == "(no output)":
        text = ""
    return ToolCallDisplay(summary=summary, detail=text, language="text")
