"""Yes/no questions the app asks outside tool approval: trust a project, overwrite, write.

One small modal used by `/undo` and `/rewind` (force over files changed by hand), `/init`
(write AGENTS.md) and the trust gate (`TrustScreen`: apply what this project's files ask
for: MCP servers, hooks, allow rules and the other items of `trust_gate`?). It
dismisses with True or False; `y`/`1` answers yes, `n`/`2`/Esc no. Like every dialog
that can open while the user types, it takes only deliberate keys (`GuardedModal`).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from aistack_tui.settings.trust import KIND_LABELS, TrustItem
from aistack_tui.tui.screens.guarded import GuardedModal


class QuestionScreen(GuardedModal[bool]):
    """A question with a body and two answers; dismisses with True for yes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1,y", "answer(True)", "Yes", show=False),
        Binding("2,n,escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, title: str, body: Text | str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__(classes="confirm-screen question-screen")
        self.title_text = title
        self.body = body
        self.yes, self.no = yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="question-dialog"):
            yield Static(Text(self.title_text, style="bold"), id="question-title")
            with VerticalScroll(id="question-body"):
                yield Static(self.body, id="question-text")
            options = Text()
            options.append(" 1 ", style="bold reverse")
            options.append(f" {self.yes} (y)\n")
            options.append(" 2 ", style="bold reverse")
            options.append(f" {self.no} (n, Esc)")
            yield Static(options, id="question-options")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class TrustScreen(QuestionScreen):
    """Apply what this project's files ask for? Lists every item, so the user sees what
    they agree to: programs to run, rights to widen, where keys would go."""

    def __init__(self, items: list[TrustItem]) -> None:
        super().__init__(
            "This project's files ask to run programs or widen what aistack may do",
            trust_body(items),
            yes="Yes, trust them (and remember this answer for this project)",
            no="No, start without them this time",
        )
        self.items = items


def trust_body(items: list[TrustItem]) -> Text:
    body = Text()
    body.append(
        "Anyone who can commit to this repository can write these. Until you agree, "
        "aistack starts without them (its deny and ask rules still apply). Agree only "
        "if you trust this repository.\n\n"
    )
    for item in items:
        body.append(f"• {KIND_LABELS.get(item.kind, item.kind)} ", style="bold")
        body.append(item.name, style="bold")
        if item.detail:
            body.append(f"\n    {item.detail}", style="italic")
        body.append("\n")
    return body


async def ask(app: App[Any], screen: QuestionScreen) -> bool:
    """Push `screen` and wait for the answer, from any task (not only a Textual worker)."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[bool] = loop.create_future()

    def resolve(value: bool | None) -> None:
        if not answer.done():
            answer.set_result(bool(value))

    app.push_screen(screen, callback=resolve)
    return await answer
