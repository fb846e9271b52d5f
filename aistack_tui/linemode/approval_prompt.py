"""The line mode's approver: a tool call the engine asks about becomes a question in the
scrolling terminal, with the same four answers as the TUI's confirm dialog.

    ? Allow Edit app.py
      Edit asks in default mode
       12 -    return a - b
       12 +    return a + b
    [y] yes  [a] yes, don't ask again for Edit(app.py) this session
    [s] yes, save Edit(app.py) to .aistack/settings.local.json  [n] no, and say why
    allow? _

Answers are typed and sent with Enter, so the prompt works on every terminal, an Emacs
shell buffer included: `y`/`1` once, `a`/`2` this session, `s`/`3` save the rule, `n`/`4`
no (then a line for the model, Enter for none), or `n` followed by the message on the
same line. Ctrl+C denies and interrupts the turn; an empty or unknown answer asks again.
Parallel calls that ask queue behind a lock and are answered one at a time; while the
question is open the renderer holds other events back, so nothing writes over it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.linemode.diff import render_diff
from aistack_tui.linemode.render import LineRenderer
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.settings.trust import KIND_LABELS, TrustItem

APPROVAL_DIFF_LINES = 200
MAX_INPUT_CHARS = 500
YES = ("y", "yes", "1")
SESSION = ("a", "always", "2")
SAVE = ("s", "save", "3")
NO = ("n", "no", "4")


@dataclass(frozen=True, slots=True)
class AskFeedback:
    """The answer was a bare "no": ask for the message to the model next."""


Answer = ApprovalDecision | AskFeedback | None


def parse_answer(text: str, *, has_rule: bool) -> Answer:
    """What a typed answer means; None when it means nothing (ask again)."""
    raw = text.strip()
    word, _, rest = raw.partition(" ")
    word = word.lower().rstrip(",.:;")
    if word in NO:
        feedback = rest.strip().lstrip(",:;-— ").strip()
        return ApprovalDecision("reject", feedback) if feedback else AskFeedback()
    if rest:
        return None  # "yes please" is not an answer we guess at
    if word in YES:
        return ApprovalDecision("once")
    if has_rule and word in SESSION:
        return ApprovalDecision("session")
    if has_rule and word in SAVE:
        return ApprovalDecision("save")
    return None


def request_view(request: ApprovalRequest) -> RenderableType:
    """The question's body: what will run or change, and why the engine asks."""
    parts: list[RenderableType] = []
    title = Text("? ", style="bold yellow")
    title.append("Allow ", style="bold")
    title.append(request.display.summary or request.tool_name, style="bold")
    parts.append(title)
    decision = request.decision
    if decision.reason:
        parts.append(Text(f"  {decision.reason}", style="italic"))
    for warning in decision.warnings:
        parts.append(Text(f"  ⚠ {warning}", style="bold red"))
    diff = request.display.diff
    command = request.tool_input.get("command")
    if diff:
        stat = str(diff.stat())
        if stat not in title.plain:
            parts.append(Text(f"  {diff.path}  {stat}", style="bold"))
        parts.append(render_diff(diff, APPROVAL_DIFF_LINES))
    elif isinstance(command, str):
        parts.append(Syntax(command, "bash", theme="ansi_dark", word_wrap=True,
                            background_color="default"))
    elif request.display.detail:
        parts.append(Text(request.display.detail))
    else:
        lines = [f"  {k}: {str(v)[:MAX_INPUT_CHARS]}" for k, v in request.tool_input.items()]
        parts.append(Text("\n".join(lines)))
    return Group(*parts)


def options_line(rule: str | None) -> Text:
    text = Text()
    text.append("[y]", style="bold green")
    text.append(" yes  ")
    if rule:
        text.append("[a]", style="bold green")
        text.append(f" yes, don't ask again for {rule} this session  ")
        text.append("[s]", style="bold green")
        text.append(f" yes, save {rule} to .aistack/settings.local.json  ")
    text.append("[n]", style="bold red")
    text.append(" no, and tell the model why")
    return text


class LineApprover:
    """Answers approval requests by asking in the terminal (an `ApprovalHandler`)."""

    def __init__(
        self,
        io: LineIO,
        renderer: LineRenderer,
        on_interrupt: Callable[[], None] | None = None,
    ) -> None:
        self.io = io
        self.renderer = renderer
        self.on_interrupt = on_interrupt
        self._lock = asyncio.Lock()

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        async with self._lock:
            with self.renderer.paused():
                self.renderer.mark_asked(request.tool_use_id)
                self.renderer.print(request_view(request))
                return await self._ask(request.decision.suggested_rule)

    async def _ask(self, rule: str | None) -> ApprovalDecision:
        self.renderer.print(options_line(rule))
        while True:
            try:
                text = await self._line("allow? ")
            except KeyboardInterrupt:
                if self.on_interrupt is not None:
                    self.on_interrupt()
                return ApprovalDecision("reject")
            except EOFError:
                return ApprovalDecision("reject")
            answer = parse_answer(text, has_rule=bool(rule))
            if isinstance(answer, ApprovalDecision):
                return answer
            if isinstance(answer, AskFeedback):
                return ApprovalDecision("reject", await self._feedback())
            keys = "y, a, s or n" if rule else "y or n"
            self.renderer.notice(f"answer {keys} (n can be followed by a message)", "warning")

    async def _feedback(self) -> str:
        try:
            text = await self._line("tell the model what to do instead (Enter: nothing): ")
        except (KeyboardInterrupt, EOFError):
            return ""
        return text.strip()

    async def _line(self, message: str) -> str:
        session: PromptSession[str] = PromptSession(input=self.io.input, output=self.io.output)
        return await session.prompt_async(FormattedText([("ansiyellow bold", message)]))

    async def ask_yes_no(self, question: str) -> bool:
        """A yes/no question; Ctrl+C or Ctrl+D mean no."""
        with self.renderer.paused():
            while True:
                try:
                    text = await self._line(question)
                except (KeyboardInterrupt, EOFError):
                    return False
                word = text.strip().lower()
                if word in YES:
                    return True
                if word in NO:
                    return False
                self.renderer.notice("answer y or n", "warning")

    async def ask_trust(self, items: list[TrustItem]) -> bool:
        """`RunConfig.trust_prompt`: apply what this project's files ask for?"""
        with self.renderer.paused():
            self.renderer.print(trust_view(items))
            return await self.ask_yes_no("trust this project? [y/n] ")


def trust_view(items: list[TrustItem]) -> RenderableType:
    body = Text()
    body.append("This project's files ask to run programs or widen what aistack may do.\n",
                style="bold yellow")
    body.append(
        "Anyone who can commit to this repository can write these. Until you agree, aistack "
        "starts without them (its deny and ask rules still apply). Agree only if you trust "
        "this repository; the answer is remembered for this project.\n"
    )
    for item in items:
        body.append(f"• {KIND_LABELS.get(item.kind, item.kind)} ", style="bold")
        body.append(item.name, style="bold")
        if item.detail:
            body.append(f"\n    {item.detail}", style="italic")
        body.append("\n")
    body.rstrip()
    return body


def terminal_approver() -> LineApprover:
    """Print mode's `--permission-prompt tty`: the same question, asked on the terminal
    through stdin and stderr, so stdout carries only the run's output (text or JSON)."""
    import sys

    from prompt_toolkit.input import create_input
    from prompt_toolkit.output import create_output
    from rich.console import Console

    console = Console(file=sys.stderr, highlight=False)
    io = LineIO(console, create_input(sys.stdin), create_output(stdout=sys.stderr))
    return LineApprover(io, LineRenderer(console, live=False))
