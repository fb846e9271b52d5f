"""A tool call as one summary line (`Bash  pytest -q  ✓ 2.1s`) with expandable output.

The card shows the call's state (pending, waiting for approval, running, done, failed,
denied) with an icon; Enter or a click opens the body (the tool's detail, diff or
output; a long one shows its first lines, the next Enter all of them) and closes it;
typing anything else goes back to the prompt (`MainScreen.on_key`). A `Task` card also
nests its subagent's tool calls as one-line rows: shown while the subagent works,
folded into a count once it is done (Enter shows them again).
Everything it shows comes from its `ToolEntry`, so it can be re-mounted by the
conversation's windowing without losing state.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from aistack_tui.tui.widgets.diff_view import unified_text
from aistack_tui.tui.widgets.entries import ToolEntry
from aistack_tui.tui.widgets.selectable import SelectableRender, selected_line

ICONS = {
    "pending": "○",
    "asking": "?",
    "running": "…",
    "done": "✓",
    "failed": "✗",
    "denied": "⊘",
}
MAX_BODY_LINES = 40
MAX_CHILD_ROWS = 8
"""Newest subagent rows shown; older ones are counted, so a long Task stays compact."""
ACTIVE_STATES = ("pending", "asking", "running")
LIVE_LINES = 6
"""The last lines of a running command's output shown under its summary."""
LIVE_REDRAW_S = 0.1
FOCUS_MARK = "▶"
"""Starts the focused card's line, so the focus shows without colour (NO_COLOR) too."""


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class ToolCard(Widget, can_focus=True):
    """One tool call; focus it and press Enter (or click) to show its output."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_output", "Show output", show=False)
    ]
    DEFAULT_CSS = """
    ToolCard { height: auto; }
    """

    def __init__(self, entry: ToolEntry) -> None:
        super().__init__(classes="tool-card")
        self.entry = entry
        self._selectable = SelectableRender("")
        self._ticker: Timer | None = None
        """Redraws a running card every second (its elapsed time)."""
        self._output_pending = False
        self._sync_classes()

    def on_mount(self) -> None:
        self._watch_running()

    def _watch_running(self) -> None:
        running = self.entry.state == "running" and self.entry.started_at is not None
        if running and self._ticker is None:
            self._ticker = self.set_interval(1.0, self.refresh)
        elif not running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def output_arrived(self) -> None:
        """A running command printed more: redraw at most ten times a second."""
        if not self._output_pending:
            self._output_pending = True
            self.set_timer(LIVE_REDRAW_S, self._show_output)

    def _show_output(self) -> None:
        self._output_pending = False
        self.refresh(layout=True)

    def _sync_classes(self) -> None:
        for state in ICONS:
            self.set_class(self.entry.state == state, f"-{state}")
        self.set_class(self.entry.expanded, "-expanded")

    def sync(self) -> None:
        """Re-read the entry after the renderer changed it."""
        self._sync_classes()
        self._watch_running()
        self.refresh(layout=True)

    def summary_line(self) -> Text:
        entry = self.entry
        line = Text()
        if self.has_focus:
            line.append(f"{FOCUS_MARK} ", style="bold reverse")
        line.append(f"{ICONS[entry.state]} ", style="bold")
        name, _, rest = entry.summary.partition(" ")
        line.append(name, style="bold")
        if rest:
            line.append("  " + rest)
        if entry.state == "asking":
            line.append("  awaiting approval", style="italic")
        elif entry.state == "running" and entry.started_at is not None:
            elapsed = int(time.monotonic() - entry.started_at)
            line.append(f"  {format_duration(elapsed).replace('.0s', 's')}", style="dim")
        elif entry.state in ("done", "failed") and entry.duration_s is not None:
            line.append(f"  {format_duration(entry.duration_s)}", style="dim")
        if entry.note:
            line.append(f"  {entry.note}", style="italic")
        if entry.children and not children_shown(entry):
            steps = len(entry.children)
            line.append(f"  {steps} step{'s' if steps != 1 else ''}", style="dim")
        has_body = bool(entry.detail or entry.diff or entry.children)
        if has_body and not (entry.expanded or children_shown(entry)):
            line.append("  ▸", style="dim")
        line.truncate(max(10, self.size.width or 200), overflow="ellipsis")
        return line

    def child_rows(self) -> Text:
        """The subagent's calls, newest last, and how it ended."""
        entry = self.entry
        width = max(10, self.size.width or 200)
        hidden = max(0, len(entry.children) - MAX_CHILD_ROWS)
        lines: list[Text] = []
        if hidden:
            lines.append(Text(f"  │ … {hidden} earlier step{'s' if hidden != 1 else ''}",
                              style="dim"))
        for child in entry.children[hidden:]:
            row = Text("  │ ", style="dim")
            row.append(f"{ICONS[child.state]} ", style="bold")
            name, _, rest = child.summary.partition(" ")
            row.append(name, style="bold")
            if rest:
                row.append("  " + rest)
            if child.state in ("done", "failed") and child.duration_s is not None:
                row.append(f"  {format_duration(child.duration_s)}", style="dim")
            if child.note:
                row.append(f"  {child.note}", style="italic")
            lines.append(row)
        if entry.child_end:
            lines.append(Text(f"  └ {entry.child_end}", style="dim italic"))
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        return Text("\n").join(lines)

    def body(self) -> RenderableType | None:
        entry = self.entry
        parts: list[RenderableType] = []
        if entry.diff:
            parts.append(unified_text(entry.diff))
        if entry.detail:
            lines = entry.detail.splitlines()
            limit = len(lines) if entry.full else MAX_BODY_LINES
            shown = "\n".join(lines[:limit])
            if len(lines) > limit:
                shown += f"\n… {len(lines) - limit} more lines — Enter shows all"
            if entry.language:
                parts.append(Syntax(shown, entry.language, theme="ansi_dark", word_wrap=True))
            else:
                parts.append(Text(shown))
        return Group(*parts) if parts else None

    def render(self) -> RenderableType:
        parts: list[RenderableType] = [self.summary_line()]
        if self.entry.state == "running" and self.entry.live_output:
            tail = self.entry.live_output.rstrip("\n").splitlines()[-LIVE_LINES:]
            parts.append(Text("\n".join(f"  {row}" for row in tail), style="dim"))
        if self.entry.children and children_shown(self.entry):
            parts.append(self.child_rows())
        if self.entry.expanded:
            body = self.body()
            if body is not None:
                parts.append(body)
        self._selectable = SelectableRender(parts[0] if len(parts) == 1 else Group(*parts))
        return self._selectable

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return self._selectable.copied_text(selection), "\n"

    def render_line(self, y: int) -> Strip:
        return selected_line(self, super().render_line(y), y)

    def action_toggle_output(self) -> None:
        entry = self.entry
        if entry.children:
            # The user's choice wins over showing the rows automatically while it runs.
            shown = children_shown(entry)
            entry.auto_open = False
            entry.expanded = not shown
        elif not entry.expanded:
            entry.expanded, entry.full = True, False
        elif not entry.full and len(entry.detail.splitlines()) > MAX_BODY_LINES:
            entry.full = True  # open → whole → closed
        else:
            entry.expanded = entry.full = False
        self.sync()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if self.text_selection is not None:
            return  # the end of a drag that selected text, not a click
        # After the refresh the click's focus change causes: toggled within the mouse
        # event, a real terminal marked the card open but its new height was never laid
        # out (nothing painted until a resize).
        self.call_after_refresh(self.action_toggle_output)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


def children_shown(entry: ToolEntry) -> bool:
    """Whether a Task card's subagent rows are visible right now."""
    if entry.auto_open:
        return entry.expanded or entry.state in ACTIVE_STATES
    return entry.expanded
