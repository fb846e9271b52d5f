"""The model picker (`/model`): known models, or any `provider/model` typed in.

Dismisses with the chosen model string, or None on Esc. The list is what the caller
passes (the current model first, then the registry's known models), so this screen has
no knowledge of providers.
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

    def __init__(self, models: list[str], current: str) -> None:
        super().__init__(classes="picker-screen")
        self.models = list(dict.fromkeys([current, *models])) if current else models
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker"):
            yield Static("Choose a model  (Enter to switch, Esc to cancel)", classes="picker-title")
            yield Input(placeholder="or type provider/model", id="model-input")
            yield OptionList(
                *[Option(self._label(m), id=m) for m in self.models], id="model-list"
            )

    def _label(self, model: str) -> Text:
        text = Text(model)
        if model == self.current:
            text.append("  (current)", style="dim")
        return text

    def on_mount(self) -> None:
        self.query_one("#model-list", OptionList).focus()

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
