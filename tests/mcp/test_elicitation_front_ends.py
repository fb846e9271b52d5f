"""A server's form as the user sees it: a question per field in the line mode, a dialog
in the TUI; wrong answers are named and asked again, never sent."""

from __future__ import annotations

import asyncio
import io
import re
from typing import Any

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Input, Static

from aistack_tui.linemode.approval_prompt import LineApprover
from aistack_tui.linemode.elicitation_prompt import LineElicitation
from aistack_tui.linemode.render import LineRenderer
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.mcp.elicitation import ElicitationAnswer, ElicitationRequest, form_fields
from aistack_tui.tui.screens.elicitation import ElicitationScreen, ScreenElicitation

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your full name"},
        "n": {"type": "integer", "title": "Favourite", "minimum": 1, "maximum": 9,
              "default": 7},
        "hero": {"type": "string", "title": "Hero",
                 "oneOf": [{"const": "h1", "title": "Superman"},
                           {"const": "h2", "title": "Wonder Woman"}]},
    },
    "required": ["name"],
}
REQUEST = ElicitationRequest("ev", "Tell us about you", form_fields(SCHEMA), SCHEMA)


def line_elicitation(pipe: Any) -> tuple[LineElicitation, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system="standard",
                      _environ={"TERM": "xterm"})
    renderer = LineRenderer(console, live=False)
    approver = LineApprover(LineIO(console, pipe, DummyOutput()), renderer)
    return LineElicitation(approver), out


async def test_line_mode_asks_each_field_and_asks_again_after_a_wrong_value() -> None:
    with create_pipe_input() as pipe:
        handler, out = line_elicitation(pipe)
        # yes; a name; 12 is out of range, then Enter keeps the default; the 2nd hero.
        pipe.send_text("y\rAda\r12\r\r2\r")
        answer = await handler.elicit(REQUEST)
    assert answer == ElicitationAnswer("accept", {"name": "Ada", "n": 7, "hero": "h2"})
    text = ANSI.sub("", out.getvalue())
    assert "? MCP server ev asks: Tell us about you" in text
    assert "Favourite: at most 9" in text


async def test_line_mode_decline() -> None:
    with create_pipe_input() as pipe:
        handler, _ = line_elicitation(pipe)
        pipe.send_text("n\r")
        assert await handler.elicit(REQUEST) == ElicitationAnswer("decline")


class FormApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("app")


async def test_tui_dialog_checks_the_form_then_sends_it() -> None:
    app = FormApp()
    async with app.run_test() as pilot:
        handler = ScreenElicitation(app)
        task = asyncio.create_task(handler.elicit(REQUEST))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ElicitationScreen)
        assert screen.query_one("#field-1", Input).value == "7"  # the default filled in
        await pilot.press("ctrl+s")  # the name is required: nothing is sent
        await pilot.pause()
        assert "Name is required" in str(screen.query_one("#elicitation-error", Static).render())
        assert not task.done()
        screen.query_one("#field-0", Input).value = "Ada"
        screen.query_one("#field-2", Input).value = "Wonder Woman"
        await pilot.press("ctrl+s")
        answer = await asyncio.wait_for(task, 5)
    assert answer == ElicitationAnswer("accept", {"name": "Ada", "n": 7, "hero": "h2"})


async def test_tui_dialog_decline_and_cancel() -> None:
    app = FormApp()
    async with app.run_test() as pilot:
        handler = ScreenElicitation(app)
        task = asyncio.create_task(handler.elicit(REQUEST))
        await pilot.pause()
        await pilot.press("ctrl+d")
        assert await asyncio.wait_for(task, 5) == ElicitationAnswer("decline")
        task = asyncio.create_task(handler.elicit(REQUEST))
        await pilot.pause()
        await pilot.press("escape")
        assert await asyncio.wait_for(task, 5) == ElicitationAnswer("cancel")
