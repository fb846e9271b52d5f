"""The model picker (`/model`): the catalogue's models, or any `provider/model` typed in.

Dismisses with the chosen model string, or None on Esc. The list is what the caller
passes (the current model first, then the catalogue's), so this screen has no knowledge
of providers. Building the catalogue takes a moment (it loads genai-prices' data), so the
caller may open the screen with the current model only and `set_models` when the list is
ready, and again when a models endpoint has answered; the screen is usable meanwhile.
`set_note` shows one line under the title (what is being asked, or what failed).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


class ModelPickerScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", show=False)
    ]

    def __init__(self, models: list[str], current: str, *, loading: bool = False) -> None:
        super().__init__(classes="picker-screen")
        self.models = list(dict.fromkeys([current, *models])) if current else models
        self.current = current
        self.loading = loading
        self._shown = False
        self._composed: tuple[list[str], bool] = ([], False)
        self.note = ""

    def compose(self) -> ComposeResult:
        self._composed = (list(self.models), self.loading)
        with Vertical(classes="picker"):
            yield Static(self._title(), classes="picker-title", id="model-title")
            yield Static(self.note, id="model-note")
            yield Input(placeholder="or type provider/model", id="model-input")
            yield OptionList(
                *[Option(self._label(m), id=m) for m in self.models], id="model-list"
            )

    def _title(self) -> str:
        more = "  · loading the model list…" if self.loading else ""
        return f"Choose a model  (Enter to switch, Esc to cancel){more}"

    def set_models(self, models: list[str]) -> None:
        """Show the full list (the current model stays first, the highlight stays);
        safe to call before the screen is mounted."""
        self.models = list(dict.fromkeys([self.current, *models])) if self.current else models
        self.loading = False
        if self._shown:
            self._show_models()

    def set_note(self, text: str) -> None:
        """One line under the title; "" hides it. Safe before the screen is mounted."""
        self.note = text
        if self._shown:
            self._show_note()

    def _show_note(self) -> None:
        note = self.query_one("#model-note", Static)
        note.update(Text(self.note, style="dim italic"))
        note.display = bool(self.note)

    def _show_models(self) -> None:
        self.query_one("#model-title", Static).update(self._title())
        options = self.query_one("#model-list", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        options.add_options([Option(self._label(m), id=m) for m in self.models])
        options.highlighted = highlighted if highlighted is not None else 0

    def _label(self, model: str) -> Text:
        text = Text(model)
        if model == self.current:
            text.append("  (current)", style="dim")
        return text

    def on_mount(self) -> None:
        self._shown = True
        if self._composed != (self.models, self.loading):  # the list came while composing
            self._show_models()
        self._show_note()
        self.query_one("#model-list", OptionList).focus()

    def on_unmount(self) -> None:
        self._shown = False  # an answer arriving after the picker closed is dropped

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if "/" not in value:
            self.notify("Write the model as provider/model", severity="warning")
            return
        self.dismiss(value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
