"""`/login`: paste an API key for a provider; dismisses with the key, or None on Esc.

The key is typed into a password field (never shown, never in the prompt history); the
command saves it through the session facade.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class LoginScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False)
    ]

    def __init__(self, provider_label: str, variables: tuple[str, ...] = ()) -> None:
        super().__init__(classes="picker-screen")
        self.provider_label = provider_label
        self.variables = variables

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker"):
            yield Static(f"Paste your {self.provider_label} API key  (Enter to save, Esc to "
                         "cancel)", classes="picker-title")
            where = (f" It is used instead of {' / '.join(self.variables)} only when that "
                     "is not set in the environment." if self.variables else "")
            yield Static("Saved in $AISTACK_HOME/credentials.json, readable only by you."
                         + where)
            yield Input(password=True, placeholder="API key", id="login-key")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        key = event.value.strip()
        if key:
            self.dismiss(key)

    def action_cancel(self) -> None:
        self.dismiss(None)
