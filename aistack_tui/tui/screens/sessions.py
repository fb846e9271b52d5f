"""The session picker (`/resume`, `aistack -r` without an id): most recent first.

Dismisses with the chosen session id, or None on Esc. Each entry shows when the session
was last used (`today 14:02`, `yesterday 09:10`, `3 Nov 14:02`, `2025-11-03` for
another year) and its title, then the first prompt (the title may be a model's summary
of it), the message count, the model and the short id. Dates are written relative to
`now`, which tests (and snapshots) inject so the screen is the same in every run.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from aistack_tui.sessions.models import SessionInfo


def when(timestamp: float, now: float) -> str:
    """A local date and time, as short as `now` allows."""
    at = dt.datetime.fromtimestamp(timestamp)
    today = dt.datetime.fromtimestamp(now).date()
    if at.date() == today:
        return at.strftime("today %H:%M")
    if at.date() == today - dt.timedelta(days=1):
        return at.strftime("yesterday %H:%M")
    if at.year == today.year:
        return f"{at.day} {at.strftime('%b %H:%M')}"
    return at.strftime("%Y-%m-%d")


def session_label(info: SessionInfo, first_prompt: str, now: float) -> Text:
    title = info.title.strip() or "(untitled)"
    text = Text(f"{when(info.updated_at, now):<16}", style="dim")
    text.append(title[:60], style="bold")
    prompt = " ".join(first_prompt.split())
    second = f"\n{'':16}"
    if prompt and prompt != title:
        second += f"› {prompt[:60] + ('…' if len(prompt) > 60 else '')}  "
    text.append(second + f"{info.message_count} msgs · {info.model} · {info.id[:8]}",
                style="dim")
    return text


class SessionPickerScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", show=False)
    ]

    def __init__(
        self,
        sessions: list[SessionInfo],
        current_id: str = "",
        first_prompts: Mapping[str, str] | None = None,
        now: float | None = None,
    ) -> None:
        """`first_prompts` by session id; `now` (default: the time) dates the entries."""
        super().__init__(classes="picker-screen")
        self.sessions = [s for s in sessions if s.id != current_id or s.message_count]
        self.first_prompts = first_prompts or {}
        self.now = time.time() if now is None else now

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker"):
            yield Static("Resume a session  (Enter to open, Esc to cancel)", classes="picker-title")
            if self.sessions:
                yield OptionList(
                    *[Option(session_label(s, self.first_prompts.get(s.id, ""), self.now),
                             id=s.id) for s in self.sessions],
                    id="session-list",
                )
            else:
                yield Static("No earlier sessions in this project.", classes="picker-empty")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
