"""A tool call as one summary line (`Bash  pytest -q  ✓ 2.1s`) with expandable output.

The card shows the call's state (pending, waiting for approval, running, done, failed,
denied) with an icon; Enter or a click toggles the body (the tool's detail, diff or
output). Everything it shows comes from its `ToolEntry`, so it can be re-mounted by the
conversation's windowing without losing state.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.widget import Widget

from aistack_tui.tui.widgets.entries import ToolEntry

ICONS = {
    "pending": "○",
    "asking": "?",
    "running": "…",
    "done": "✓",
    "failed": "✗",
    "denied": "⊘",
}
MAX_BODY_LINES = 40


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class ToolCard(Widget, can_focus=True):
    """One tool call; focus it and press Enter (or click) to show its output."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "toggle", "Show output", show=False)]
    DEFAULT_CSS = """
    ToolCard { height: auto; }
    """

    def __init__(self, entry: ToolEntry) -> None:
        super().__init__(classes="tool-card")
        self.entry = entry
        self._sync_classes()

    def _sync_classes(self) -> None:
        for state in ICONS:
            self.set_class(self.entry.state == state, f"-{state}")
        self.set_class(self.entry.expanded, "-expanded")

    def sync(self) -> None:
        """Re-read the entry after the renderer changed it."""
        self._sync_classes()
        self.refresh(layout=True)

    def summary_line(self) -> Text:
        entry = self.entry
        line = Text()
        line.append(f"{ICONS[entry.state]} ", style="bold")
        name, _, rest = entry.summary.partition(" ")
        line.append(name, style="bold")
        if rest:
            line.append("  " + rest)
        if entry.state == "asking":
            line.append("  awaiting approval", style="italic")
        elif entry.state in ("done", "failed") and entry.duration_s is not None:
            line.append(f"  {format_duration(entry.duration_s)}", style="dim")
        if entry.note:
            line.append(f"  {entry.note}", style="italic")
        has_body = bool(entry.detail or entry.diff)
        if has_body and not entry.expanded:
            line.append("  ▸", style="dim")
        line.truncate(max(10, self.size.width or 200), overflow="ellipsis")
        return line

    def body(self) -> RenderableType | None:
        entry = self.entry
        parts: list[RenderableType] = []
        if entry.diff:
            parts.append(Syntax(entry.diff, "diff", theme="ansi_dark", word_wrap=True))
        if entry.detail:
            lines = entry.detail.splitlines()
            shown = "\n".join(lines[:MAX_BODY_LINES])
            if len(lines) > MAX_BODY_LINES:
                shown += f"\n… {len(lines) - MAX_BODY_LINES} more lines"
            if entry.language:
                parts.append(Syntax(shown, entry.language, theme="ansi_dark", word_wrap=True))
            else:
                parts.append(Text(shown))
        return Group(*parts) if parts else None

    def render(self) -> RenderableType:
        summary = self.summary_line()
        if self.entry.expanded:
            body = self.body()
            if body is not None:
                return Group(summary, body)
        return summary

    def action_toggle(self) -> None:
        self.entry.expanded = not self.entry.expanded
        self.sync()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle()
