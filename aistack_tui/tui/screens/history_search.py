"""Ctrl+R: search the prompt history, newest first, and put the chosen entry back in the
prompt (to edit or send). Dismisses with the entry, or None on Esc."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

MAX_SHOWN = 200
"""Matches listed at once; the history file keeps 500, a longer list only scrolls."""


def search(items: list[str], query: str) -> list[str]:
    """Entries containing every word of `query` (any case), newest first, each once."""
    words = query.lower().split()
    found: list[str] = []
    seen: set[str] = set()
    for item in reversed(items):
        if item in seen:
            continue
        lowered = item.lower()
        if all(word in lowered for word in words):
            seen.add(item)
            found.append(item)
    return found


def entry_label(item: str, width: int = 100) -> Text:
    """One line per entry: its first line, and how many more it has."""
    lines = item.splitlines() or [""]
    label = Text(lines[0][:width])
    if len(lines) > 1:
        label.append(f"  (+{len(lines) - 1} lines)", style="dim")
    return label


class HistorySearchScreen(ModalScreen[str | None]):
    """Type to filter; Up/Down (or Ctrl+R again) move, Enter takes the entry, Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("down,ctrl+r", "move(1)", "Older", show=False, priority=True),
        Binding("up,ctrl+s", "move(-1)", "Newer", show=False, priority=True),
        Binding("enter", "choose", "Choose", show=False, priority=True),
    ]

    def __init__(self, items: list[str], query: str = "") -> None:
        super().__init__(classes="picker-screen")
        self.items = items
        self.query_text = query
        self._matches: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker"):
            yield Static("Search the prompt history  (Enter to use, Esc to cancel)",
                         classes="picker-title")
            yield Input(self.query_text, placeholder="type to search", id="history-query")
            yield OptionList(id="history-matches")

    def on_mount(self) -> None:
        self._refresh(self.query_text)
        self.query_one(Input).focus()

    def matches(self) -> list[str]:
        """The entries listed right now, in order."""
        return list(self._matches)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._refresh(event.value)

    def _refresh(self, query: str) -> None:
        self._matches = search(self.items, query)[:MAX_SHOWN]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(entry_label(m), id=str(i))
                             for i, m in enumerate(self._matches)])
        options.highlighted = 0 if self._matches else None

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if not self._matches:
            return
        current = options.highlighted or 0
        options.highlighted = max(0, min(len(self._matches) - 1, current + step))

    def action_choose(self) -> None:
        index = self.query_one(OptionList).highlighted
        self.dismiss(self._matches[index] if index is not None and self._matches else None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self._matches[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
