"""`/permissions add`: a dialog to add an allow, ask or deny rule to a chosen layer.

The rule is checked and saved by the session (`LiveSession.add_permission_rule`: the
settings loader's own rule parser, the file written back whole); a refused rule keeps the
dialog open with the reason under the field, so nothing typed is lost. Dismisses with
where the rule went, or None on Esc.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, cast, get_args

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, RadioButton, RadioSet, Static

from aistack_tui.permissions.types import Behavior
from aistack_tui.session.permission_views import RuleTarget
from aistack_tui.settings.layers import ConfigError

AddRule = Callable[[Behavior, str, RuleTarget], str]
Done = Callable[[Behavior, str, str], str]

LAYER_HELP: dict[RuleTarget, str] = {
    "session": "session (until you quit)",
    "local": "local (.aistack/settings.local.json)",
    "project": "project (.aistack/settings.json)",
    "user": "user ($AISTACK_HOME/settings.json)",
}
EXAMPLES = "Bash(npm test:*) · Edit(src/**) · Read(./.env) · WebFetch(domain:example.com)"


class RuleEditorScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False)
    ]

    def __init__(self, add: AddRule, done: Done) -> None:
        """`add` adds a rule (ConfigError when refused) and says where it went; `done`
        words the result this screen dismisses with."""
        super().__init__(classes="picker-screen")
        self.add = add
        self.done = done

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker", id="rule-editor"):
            yield Static("Add a permission rule  (Tab moves, Enter saves, Esc cancels)",
                         classes="picker-title")
            with Horizontal(id="rule-choices"):
                with RadioSet(id="rule-behavior"):
                    for behavior in get_args(Behavior):
                        yield RadioButton(behavior, value=behavior == "allow")
                with RadioSet(id="rule-layer"):
                    for layer, help_text in LAYER_HELP.items():
                        yield RadioButton(help_text, value=layer == "local")
            yield Input(placeholder=EXAMPLES, id="rule-text")
            yield Static("", id="rule-error")

    def on_mount(self) -> None:
        self.query_one("#rule-text", Input).focus()

    def choose(self, behavior: Behavior, layer: RuleTarget) -> None:
        """Select a behavior and a layer (what clicking the buttons does)."""
        behaviors = cast("tuple[Behavior, ...]", get_args(Behavior))
        buttons = list(self.query_one("#rule-behavior", RadioSet).query(RadioButton))
        buttons[behaviors.index(behavior)].value = True
        layers = list(self.query_one("#rule-layer", RadioSet).query(RadioButton))
        layers[list(LAYER_HELP).index(layer)].value = True

    def _chosen(self) -> tuple[Behavior, RuleTarget]:
        behaviors = cast("tuple[Behavior, ...]", get_args(Behavior))
        behavior_index = self.query_one("#rule-behavior", RadioSet).pressed_index
        layer_index = self.query_one("#rule-layer", RadioSet).pressed_index
        return behaviors[max(behavior_index, 0)], list(LAYER_HELP)[max(layer_index, 0)]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        behavior, layer = self._chosen()
        error = self.query_one("#rule-error", Static)
        if not event.value.strip():
            error.update("Type a rule first.")
            return
        try:
            where = self.add(behavior, event.value, layer)
        except ConfigError as e:
            error.update(f"✗ {e}")
            return
        self.dismiss(self.done(behavior, event.value, where))

    def action_cancel(self) -> None:
        self.dismiss(None)
