"""The todo list the model keeps with TodoWrite, shown beside the conversation.

It is fed from the TodoWrite call's input (neutral data in the event), so the TUI needs
nothing from the tools layer; hidden while the list is empty.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}


def parse_todos(raw: Any) -> list[tuple[str, str]]:
    """(status, text) pairs from a TodoWrite input; bad items are skipped, not fatal."""
    items: list[tuple[str, str]] = []
    if not isinstance(raw, list):
        return items
    for item in raw:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status", "pending"))
        text = item.get("activeForm") if status == "in_progress" else item.get("content")
        items.append((status, str(text or item.get("content", ""))))
    return items


class TodoPanel(Static):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.todos: list[tuple[str, str]] = []

    def on_mount(self) -> None:
        self.display = False

    def set_todos(self, todos: list[tuple[str, str]]) -> None:
        self.todos = todos
        self.display = bool(todos)
        text = Text("Todos\n", style="bold")
        for status, content in todos:
            style = "dim strike" if status == "completed" else (
                "bold" if status == "in_progress" else ""
            )
            text.append(f"{MARKS.get(status, '☐')} {content}\n", style=style)
        self.update(text)
