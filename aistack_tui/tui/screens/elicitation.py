"""The form an MCP server asks the user to fill in (elicitation), as a modal dialog.

One input per field, labelled with the field's title, description and allowed values;
the default is filled in. Every answer is checked with `FormField.parse` (the same check
the line mode uses) before the form is sent: a wrong value is named under the form and
nothing is sent. Ctrl+S (or the Submit button) sends, Ctrl+D declines, Esc cancels.
Requests queue behind a lock, like approvals.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from aistack_tui.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    FormField,
    FormValue,
)


def field_label(field: FormField) -> Text:
    label = Text(field.title, style="bold")
    if field.required:
        label.append(" *", style="bold red")
    if field.description:
        label.append(f"  {field.description}", style="dim")
    if field.choices:
        options = ", ".join(f"{i}={lbl}" for i, (_, lbl) in enumerate(field.choices, 1))
        many = " (several, comma-separated)" if field.kind == "multi" else ""
        label.append(f"\n  one of: {options}{many}", style="italic")
    elif field.kind == "boolean":
        label.append("\n  yes or no", style="italic")
    return label


def default_text(field: FormField) -> str:
    value = field.default
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


class ElicitationScreen(ModalScreen[ElicitationAnswer]):
    """Fill in a server's form; dismisses with the answer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Submit", show=False, priority=True),
        Binding("ctrl+d", "decline", "Decline", show=False, priority=True),
        Binding("escape", "cancel", "Cancel", show=False, priority=True),
    ]

    def __init__(self, request: ElicitationRequest) -> None:
        super().__init__(classes="confirm-screen question-screen")
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="question-dialog"):
            yield Static(Text(f"MCP server {request.server} asks", style="bold"),
                         id="question-title")
            with VerticalScroll(id="question-body"):
                yield Static(Text(request.message), id="question-text")
                for index, field in enumerate(request.fields):
                    yield Static(field_label(field), classes="elicitation-label")
                    yield Input(value=default_text(field), id=f"field-{index}",
                                placeholder=field.format or field.kind)
                yield Static("", id="elicitation-error")
            with Horizontal(id="elicitation-buttons"):
                yield Button("Submit (Ctrl+S)", id="submit", variant="primary")
                yield Button("Decline (Ctrl+D)", id="decline")
                yield Button("Cancel (Esc)", id="cancel")

    def values(self) -> dict[str, FormValue]:
        """The parsed answers; raises ValueError naming the first wrong one."""
        content: dict[str, FormValue] = {}
        for index, field in enumerate(self.request.fields):
            value = field.parse(self.query_one(f"#field-{index}", Input).value)
            if value is not None:
                content[field.name] = value
        return content

    def action_submit(self) -> None:
        try:
            content = self.values()
        except ValueError as e:
            self.query_one("#elicitation-error", Static).update(Text(str(e), style="bold red"))
            return
        self.dismiss(ElicitationAnswer("accept", content))

    def action_decline(self) -> None:
        self.dismiss(ElicitationAnswer("decline"))

    def action_cancel(self) -> None:
        self.dismiss(ElicitationAnswer("cancel"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        {"submit": self.action_submit, "decline": self.action_decline,
         "cancel": self.action_cancel}.get(event.button.id or "", self.action_cancel)()


class ScreenElicitation:
    """The TUI's `ElicitationHandler`: one dialog at a time."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._lock = asyncio.Lock()

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        async with self._lock:
            loop = asyncio.get_running_loop()
            answer: asyncio.Future[ElicitationAnswer] = loop.create_future()

            def resolve(value: ElicitationAnswer | None) -> None:
                if not answer.done():
                    answer.set_result(value or ElicitationAnswer("cancel"))

            screen = ElicitationScreen(request)
            self.app.push_screen(screen, callback=resolve)
            try:
                return await answer
            except asyncio.CancelledError:
                if screen.is_attached and self.app.screen is screen:
                    screen.dismiss(None)
                raise
