"""The confirm dialog for a tool call the permission engine answered `ask` for.

Shows the tool, the engine's reason and warnings, and what will happen: an edit's diff
(side by side when the terminal is wide) or a command. Four answers, each on a key:
`1`/`y` yes once; `2` yes and don't ask again this session; `3` yes and save the rule to
`.aistack/settings.local.json`; `4`/`n` no with a message for the model, and the agent
goes on. `Esc` is no *and stop*, as in Claude Code: the call is denied and the turn ends.
The dialog only takes deliberate keys (`GuardedModal`): it can open mid-sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Static

from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.tui.screens.guarded import GuardedModal
from aistack_tui.tui.widgets.diff_view import render_diff

EDIT_TOOLS = ("Edit", "Write", "MultiEdit")


@dataclass(frozen=True, slots=True)
class ConfirmAnswer:
    """The user's decision, and whether they also stopped the turn (Esc)."""

    decision: ApprovalDecision
    stop_turn: bool = False


class ConfirmScreen(GuardedModal[ConfirmAnswer]):
    """Ask whether one tool call may run; dismisses with a `ConfirmAnswer`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1,y", "answer('once')", "Yes", show=False),
        Binding("2", "answer('session')", "Yes, this session", show=False),
        Binding("3", "answer('save')", "Yes, save rule", show=False),
        Binding("4,n", "ask_feedback", "No", show=False),
        Binding("escape", "reject", "No", show=False),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(classes="confirm-screen")
        self.request = request
        self.rule = request.decision.suggested_rule

    def compose(self) -> ComposeResult:
        req = self.request
        with Vertical(id="confirm-dialog"):
            title = Text()
            title.append("Allow ", style="bold")
            title.append(req.display.summary or req.tool_name, style="bold reverse")
            title.append(" ?", style="bold")
            yield Static(title, id="confirm-title")
            if req.decision.reason:
                yield Static(Text(req.decision.reason, style="italic"), id="confirm-reason")
            for warning in req.decision.warnings:
                yield Static(Text(f"⚠ {warning}", style="bold red"), classes="confirm-warning")
            with VerticalScroll(id="confirm-body"):
                yield Static(id="confirm-preview")
            yield Static(self._options(), id="confirm-options")
            yield Input(placeholder="Tell the model what to do instead (Enter to send)",
                        id="confirm-feedback")

    def on_mount(self) -> None:
        self.query_one("#confirm-feedback", Input).display = False
        self._draw_preview()

    def on_resize(self) -> None:
        self._draw_preview()

    def _draw_preview(self) -> None:
        req = self.request
        preview = self.query_one("#confirm-preview", Static)
        command = req.tool_input.get("command")
        diff = req.display.diff
        if diff:
            head = Text(f"{diff.path}  {diff.stat()}\n", style="bold")
            preview.update(Group(head, render_diff(diff, self.app.size.width)))
        elif isinstance(command, str):
            from rich.syntax import Syntax  # deferred: pygments, ~60 ms before the first frame

            preview.update(Syntax(command, "bash", theme="ansi_dark", word_wrap=True))
        elif req.display.detail:
            preview.update(Text(req.display.detail))
        else:
            preview.update(Text(_input_lines(req.tool_input)))

    def _options(self) -> Text:
        text = Text()
        text.append(" 1 ", style="bold reverse")
        text.append(" Yes (y)\n")
        if self.rule:
            text.append(" 2 ", style="bold reverse")
            text.append(f" Yes, and don't ask again for {self.rule} this session\n")
            text.append(" 3 ", style="bold reverse")
            text.append(f" Yes, and save {self.rule} to .aistack/settings.local.json\n")
        text.append(" 4 ", style="bold reverse")
        text.append(" No, and tell the model what to do differently (n)\n")
        text.append(" Esc ", style="bold reverse")
        text.append(" No, and stop")
        return text

    def action_answer(self, kind: str) -> None:
        if self.query_one("#confirm-feedback", Input).display:
            return
        if kind in ("session", "save") and not self.rule:
            return
        if kind == "once":
            self.dismiss(ConfirmAnswer(ApprovalDecision("once")))
        elif kind == "session":
            self.dismiss(ConfirmAnswer(ApprovalDecision("session")))
        elif kind == "save":
            self.dismiss(ConfirmAnswer(ApprovalDecision("save")))

    def action_ask_feedback(self) -> None:
        feedback = self.query_one("#confirm-feedback", Input)
        feedback.display = True
        feedback.focus()

    def action_reject(self) -> None:
        """Esc: no, and stop the turn. In the message box it only closes the box, back
        to the four answers, so a half-typed message is not taken for "stop"."""
        feedback = self.query_one("#confirm-feedback", Input)
        if feedback.display:
            feedback.display = False
            self.set_focus(None)
            return
        self.dismiss(ConfirmAnswer(ApprovalDecision("reject"), stop_turn=True))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(ConfirmAnswer(ApprovalDecision("reject", event.value.strip())))


def _input_lines(tool_input: dict[str, object]) -> str:
    return "\n".join(f"{k}: {str(v)[:500]}" for k, v in tool_input.items())
