"""The session picker (`/resume`, `aistack -r` without an id): most recent first.

Dismisses with the chosen session id, or None on Esc. Each line shows the title, the
message count, the model and the short id; no clock time, so the screen is the same in
every run (and in snapshot tests) — the order already says which is newest.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from aistack_tui.sessions.models import SessionInfo


def session_label(info: SessionInfo) -> Text:
    title = info.title.strip() or "(untitled)"
    text = Text(title[:60], style="bold")
    text.append(f"  {info.message_count} msgs · {info.model} · {info.id[:8]}", style="dim")
    return text


class SessionPickerScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", show=False)
    ]

    def __init__(self, sessions: list[SessionInfo], current_id: str = "") -> None:
        super().__init__(classes="picker-screen")
        self.sessions = [s for s in sessions if s.id != current_id or s.message_count]

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker"):
            yield Static("Resume a session  (Enter to open, Esc to cancel)", classes="picker-title")
            if self.sessions:
                yield OptionList(
                    *[Option(session_label(s), id=s.id) for s in self.sessions],
                    id="session-list",
                )
            else:
                yield Static("No earlier sessions in this project.", classes="picker-empty")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
