"""Agent events as lines in a scrolling terminal.

What a scrolling terminal has printed stays printed, so nothing here redraws history:
- an answer is printed one finished Markdown block at a time (rendered by Rich); the
  unfinished tail, or a spinner while the model thinks or a tool runs, lives in a small
  transient `rich.live.Live` region under it that is erased when the block is done;
- on a terminal that cannot move its cursor (`TERM=dumb`, an Emacs shell buffer) there
  is no live region: the answer's text is written as it streams, unrendered;
- a tool call is one line when it is requested (`● Edit app.py`) and one when it ends
  (`  ✓ 0.1s`, `  ✗ error`, `  ⊘ denied: …`), an edit with its coloured diff.

The approval prompt takes the terminal in the middle of a run. `paused()` erases the live
region and holds back events that arrive meanwhile (a parallel read finishing, a
subagent's progress), printing them once the prompt is answered, so the two never write
over each other.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, assert_never

from rich.console import Console, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.text import Text

from aistack_tui.agent import events as ev
from aistack_tui.linemode.diff import render_diff
from aistack_tui.linemode.markdown_stream import MarkdownBlocks
from aistack_tui.llm import types as lt
from aistack_tui.tools.diffs import FileDiff

EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
FINISHED_DIFF_LINES = 30
"""An edit nobody was asked about shows this much of its diff when it ends."""
REFRESH_S = 0.08
ATTACHED_PREFIX = '<attached-file path="'
HOOK_BLOCK_PREFIX = "Blocked by a PreToolUse hook:"
CODE_THEME = "ansi_dark"


def first_line(text: str, limit: int = 100) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def format_cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


@dataclass(slots=True)
class _Card:
    """What was printed for one tool call, so its end line can refer back to it."""

    name: str
    summary: str
    diff: FileDiff | None = None
    asked: bool = False
    denied: bool = False


@dataclass(slots=True)
class _RunState:
    answer: MarkdownBlocks = field(default_factory=MarkdownBlocks)
    streamed: bool = False
    """Some text of the current model response was shown (blocks or raw)."""
    thinking: str = ""
    status: str = "thinking"
    cards: dict[str, _Card] = field(default_factory=dict[str, _Card])
    last_header: str | None = None
    """The tool call whose header is the last line printed (its end line can be short)."""
    usage: ev.UsageUpdated | None = None


class LineRenderer:
    """Prints one session's events to a Rich console; `live` picks the streaming style."""

    def __init__(self, console: Console, *, live: bool | None = None) -> None:
        self.console = console
        self.live_enabled = (
            console.is_terminal and not console.is_dumb_terminal if live is None else live
        )
        self._live: Live | None = None
        self._last_refresh = 0.0
        self._state = _RunState()
        self._held: list[ev.AgentEvent] | None = None
        self._raw_open = False
        """Plain streaming left the cursor after text with no newline yet."""

    # --- lines outside the event stream ---------------------------------------------

    def notice(self, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        style = {"info": "dim", "warning": "yellow", "error": "bold red"}[level]
        mark = {"info": "·", "warning": "⚠", "error": "✗"}[level]
        self._print(Text(f"{mark} {text}", style=style))

    def print(self, renderable: RenderableType) -> None:
        self._print(renderable)

    # --- the approval prompt's hold on the terminal -------------------------------------

    @contextmanager
    def paused(self) -> Generator[None, None, None]:
        """Erase the live region and hold events back until the block ends."""
        self._stop_live()
        self._end_raw_line()
        outer = self._held is not None
        if not outer:
            self._held = []
        try:
            yield
        finally:
            if not outer:
                held, self._held = self._held or [], None
                for event in held:
                    self.handle(event)

    @property
    def holding(self) -> bool:
        return self._held is not None

    def mark_asked(self, tool_use_id: str) -> None:
        """The approval prompt showed this call's diff: its end line need not repeat it."""
        card = self._state.cards.get(tool_use_id)
        if card is not None:
            card.asked = True

    # --- the event dispatch --------------------------------------------------------------

    def begin_run(self) -> None:
        self._state = _RunState()

    def handle(self, event: ev.AgentEvent) -> None:
        if self._held is not None:
            self._held.append(event)
            return
        state = self._state
        match event:
            case ev.TurnStarted():
                state.answer.reset()
                state.streamed = False
                state.status = "thinking"
                self._refresh(force=True)
            case ev.TextDelta(text=text):
                self._flush_thinking()
                self._text(text)
            case ev.ThinkingDelta(text=text):
                state.thinking += text
                state.status = "thinking"
                self._refresh()
            case ev.StreamReset(reason=reason, attempt=attempt, delay=delay):
                shown = state.streamed
                state.answer.reset()
                state.thinking = ""
                state.streamed = False
                self._end_raw_line()
                again = " — the answer starts again" if shown else ""
                self.notice(f"stream failed ({reason}); retry {attempt} in {delay:.1f}s{again}",
                            "warning")
            case ev.MessageAdded(message=message):
                self._message_added(message)
            case ev.ToolCallRequested(tool_use_id=tool_id, name=name, input=tool_input):
                self._finish_answer()
                summary = event.display.summary or _fallback_summary(name, tool_input)
                state.cards[tool_id] = _Card(name, summary, diff=event.display.diff)
                self._tool_header(summary)
                state.last_header = tool_id  # after the print, which clears it
            case ev.PermissionAsked():
                state.status = "waiting for approval"
            case ev.PermissionDecided(tool_use_id=tool_id, behavior="deny", reason=reason):
                card = state.cards.get(tool_id)
                if card is not None:
                    card.denied = True
                self._end_line(tool_id, Text(f"⊘ denied: {first_line(reason)}", style="yellow"))
            case ev.PermissionDecided():
                pass
            case ev.ToolStarted(name=name):
                state.status = f"running {name}"
                self._refresh(force=True)
            case ev.ToolFinished():
                self._tool_finished(event)
                state.status = "thinking"
            case ev.UsageUpdated():
                state.usage = event
            case ev.Notice(text=text, level=level):
                self.notice(text, level)
            case ev.ErrorOccurred(message=message, kind=kind):
                self._finish_answer()
                self.notice(f"{kind}: {message}", "error")
            case ev.SubagentEvent(description=description, event=child):
                self._subagent(description, child)
            case ev.TurnEnded():
                self._finish_answer()
                self._stop_live()
                self._footer(event)
            case ev.ToolInputDelta():
                pass  # a call is shown once the model has finished it
            case _:
                assert_never(event)

    def tick(self) -> None:
        """Animate the spinner (the REPL calls this a few times a second during a run)."""
        if self._held is None and self._live is not None:
            self._refresh()

    def end_run(self) -> None:
        """Settle the terminal after a run, however it ended."""
        self._finish_answer()
        self._stop_live()
        self._end_raw_line()

    # --- answers -----------------------------------------------------------------------

    def _text(self, text: str) -> None:
        state = self._state
        state.streamed = True
        state.status = "writing"
        if not self.live_enabled:
            self.console.file.write(text)
            self.console.file.flush()
            self._raw_open = not text.endswith("\n") if text else self._raw_open
            return
        state.answer.feed(text)
        for block in state.answer.take_finished():
            self._print_block(block)
        self._refresh()

    def _finish_answer(self) -> None:
        self._flush_thinking()
        state = self._state
        if self.live_enabled:
            for block in state.answer.take_rest():
                self._print_block(block)
        else:
            state.answer.reset()
            self._end_raw_line()

    def _print_block(self, block: str) -> None:
        self._print(Markdown(block, code_theme=CODE_THEME))
        self._print(Text(""))

    def _flush_thinking(self) -> None:
        state = self._state
        if state.thinking.strip():
            self._print(Text(state.thinking.strip(), style="dim italic"))
            self._print(Text(""))
        state.thinking = ""

    def _message_added(self, message: lt.Message) -> None:
        state = self._state
        if message.role == "assistant":
            text = message.text()
            if not state.streamed and text.strip():
                # A provider that answered in one piece: nothing was streamed.
                state.answer.reset()
                state.answer.feed(text)
                state.streamed = True
                if not self.live_enabled:
                    state.answer.reset()
                    self._end_raw_line()
                    self._print(Text(text))
            self._finish_answer()
            return
        for block in message.content:
            if isinstance(block, lt.TextBlock) and block.text.startswith(ATTACHED_PREFIX):
                path = block.text[len(ATTACHED_PREFIX) :].split('"', 1)[0]
                self.notice(f"attached {path}")

    # --- tool lines -----------------------------------------------------------------------

    def _tool_header(self, summary: str) -> None:
        name, _, rest = summary.partition(" ")
        line = Text("● ", style="cyan")
        line.append(name, style="bold")
        if rest:
            line.append(" " + rest)
        self._print(line)

    def _end_line(self, tool_id: str, status: Text, summary: str = "") -> None:
        """A call's end line: short under its own header, with the summary elsewhere."""
        card = self._state.cards.get(tool_id)
        line = Text("  ")
        if card is not None and self._state.last_header != tool_id:
            line.append((summary or card.summary) + " ", style="bold")
        line.append_text(status)
        self._print(line)

    def _tool_finished(self, event: ev.ToolFinished) -> None:
        tool_id, result, display = event.tool_use_id, event.result, event.display
        duration = event.duration_s
        card = self._state.cards.get(tool_id)
        if card is not None and card.denied:
            return  # its denial line was the end line
        text = result.text()
        took = format_duration(duration)
        if result.is_error and text.startswith(HOOK_BLOCK_PREFIX):
            reason = text[len(HOOK_BLOCK_PREFIX) :]
            self._end_line(tool_id, Text(f"⊘ blocked by hook: {first_line(reason)}",
                                         style="yellow"))
            return
        if result.is_error:
            self._end_line(tool_id, Text(f"✗ {first_line(text)} · {took}", style="red"))
            return
        summary = display.summary if display is not None else ""
        diff = display.diff if display is not None and display.diff else None
        if diff is None and card is not None:
            diff = card.diff
        status = Text("✓ ", style="green")
        extra = summary
        if card is not None and summary.startswith(card.summary):
            extra = summary[len(card.summary) :].strip()
        if extra and (card is None or self._state.last_header == tool_id):
            status.append(extra + " ")
        status.append(took, style="dim")
        self._end_line(tool_id, status, summary)
        if diff and card is not None and card.name in EDIT_TOOLS and not card.asked:
            self._print(render_diff(diff, FINISHED_DIFF_LINES))

    def _subagent(self, description: str, child: ev.AgentEvent) -> None:
        """A `Task` subagent's tool calls as indented lines; its text stays inside it."""
        match child:
            case ev.ToolCallRequested(name=name, input=tool_input):
                summary = child.display.summary or _fallback_summary(name, tool_input)
                self._print(Text(f"    ↳ {description}: {summary}", style="dim"))
            case ev.ToolFinished(result=result) if result.is_error:
                self._print(Text(f"    ↳ {description}: ✗ {first_line(result.text())}",
                                 style="dim red"))
            case ev.PermissionDecided(behavior="deny", reason=reason):
                self._print(Text(f"    ↳ {description}: ⊘ denied: {first_line(reason)}",
                                 style="dim yellow"))
            case ev.ToolStarted(name=name):
                self._state.status = f"{description}: running {name}"
                self._refresh()
            case (
                ev.TurnStarted() | ev.TextDelta() | ev.ThinkingDelta() | ev.StreamReset()
                | ev.MessageAdded() | ev.PermissionAsked() | ev.PermissionDecided()
                | ev.ToolFinished() | ev.UsageUpdated() | ev.Notice() | ev.ErrorOccurred()
                | ev.SubagentEvent() | ev.TurnEnded() | ev.ToolInputDelta()
            ):
                pass  # the subagent's own text and bookkeeping stay inside its Task card
            case _:
                assert_never(child)

    # --- the end of a run ----------------------------------------------------------------

    def _footer(self, end: ev.TurnEnded) -> None:
        parts: list[str] = []
        if end.reason == "interrupted":
            self.notice("interrupted — the partial answer was kept", "warning")
        elif end.reason != "completed":
            why = end.detail or end.reason.replace("_", " ")
            self.notice(f"stopped: {why}", "warning" if end.reason != "error" else "error")
        u = end.usage
        parts.append(f"{u.input_tokens + u.cache_read_input_tokens:,} in")
        parts.append(f"{u.output_tokens:,} out")
        if end.cost_usd is not None:
            cost = f"${end.cost_usd:.4f}"
            usage = self._state.usage
            if usage is not None and usage.session_cost_usd is not None:
                cost += f" (session ${usage.session_cost_usd:.4f})"
            parts.append(cost)
        parts.append(format_duration(end.duration_ms / 1000))
        self._print(Text("─ " + " · ".join(parts), style="dim"))

    # --- the console and the live region ----------------------------------------------

    def _print(self, renderable: RenderableType) -> None:
        self._end_raw_line()
        self.console.print(renderable)
        self._state.last_header = None

    def _end_raw_line(self) -> None:
        if self._raw_open:
            self.console.file.write("\n")
            self.console.file.flush()
            self._raw_open = False

    def _live_renderable(self) -> RenderableType:
        tail = self._state.answer.tail
        if not tail.strip():
            return Spinner("dots", Text(f"{self._state.status}… (Ctrl+C to interrupt)",
                                        style="dim"))
        lines = tail.splitlines()
        room = max(self.console.size.height - 4, 3)
        if len(lines) > room:
            return Text("\n".join(lines[-room:]))
        return Markdown(tail, code_theme=CODE_THEME)

    def _refresh(self, *, force: bool = False) -> None:
        if not self.live_enabled or self._held is not None:
            return
        now = time.monotonic()
        if not force and now - self._last_refresh < REFRESH_S and self._live is not None:
            return
        self._last_refresh = now
        if self._live is None:
            self._live = Live(
                self._live_renderable(), console=self.console, transient=True,
                auto_refresh=False, redirect_stdout=False, redirect_stderr=False,
            )
            self._live.start()
        self._live.update(self._live_renderable(), refresh=True)

    def _stop_live(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()


def _fallback_summary(name: str, tool_input: dict[str, object]) -> str:
    for key in ("file_path", "path", "command", "pattern", "url", "query", "description"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return f"{name} {first_line(value, 120)}"
    return name
