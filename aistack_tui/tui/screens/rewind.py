"""The rewind list Esc Esc opens on an empty prompt (as in Claude Code): the turns that
changed files, newest first; choosing one runs `/rewind N` (files and conversation back
to before that turn, its prompt put back in the input to edit and resend).

Dismisses with the turn's number as `/rewind` counts (oldest first), or None on Esc.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:  # checkpoints load with the session, after the app's first frame
    from aistack_tui.checkpoints.manager import TurnRecord
    from aistack_tui.session.live import LiveSession
    from aistack_tui.tui.renderer import Level
    from aistack_tui.tui.widgets.prompt_input import PromptInput


class RewindHost(Protocol):
    """What the rewind list needs of the app."""

    @property
    def session(self) -> LiveSession | None: ...
    @property
    def prompt(self) -> PromptInput: ...
    @property
    def textual_app(self) -> App[Any]: ...

    async def notice(self, text: str, level: Level = "info") -> None: ...
    async def run_command(self, name: str, args: str) -> None: ...


def turn_label(number: int, turn: TurnRecord) -> Text:
    text = Text(f"{number:>2}. ", style="dim")
    text.append(" ".join(turn.label.split())[:70], style="bold")
    when = dt.datetime.fromtimestamp(turn.created_at).strftime("%H:%M")
    text.append(f"  {when}", style="dim")
    return text


class RewindPickerScreen(ModalScreen[int | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", show=False)
    ]

    def __init__(self, turns: Sequence[TurnRecord]) -> None:
        super().__init__(classes="picker-screen")
        self.turns = list(turns)

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker"):
            yield Static("Rewind to before a turn: files and conversation  "
                         "(Enter to rewind, Esc to cancel)", classes="picker-title")
            numbered = list(enumerate(self.turns, 1))
            yield OptionList(
                *[Option(turn_label(n, t), id=str(n)) for n, t in reversed(numbered)],
                id="rewind-list",
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id or 0) or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


async def pick_rewind(host: RewindHost) -> None:
    """Show the list (or why there is none) and run `/rewind N` for the chosen turn."""
    if host.session is None:
        return
    if not host.session.checkpoints_on:
        await host.notice("Checkpoints are off (settings `checkpoints`): nothing to rewind.",
                          "warning")
        return
    turns = host.session.checkpoint_turns()
    if not turns:
        await host.notice("No turn of this session has changed files yet: nothing to rewind.")
        return
    chosen = await host.textual_app.push_screen_wait(RewindPickerScreen(turns))
    if chosen is not None:
        await host.run_command("rewind", str(chosen))
    host.prompt.focus()
