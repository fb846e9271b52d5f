"""Map agent events to widget updates: the only place that knows both sides.

A plain class (not a widget), so it can be driven by a list of events in a test and the
app stays small. It dispatches with `match` on the closed `AgentEvent` union
and never re-renders history: a text delta goes to the one streaming answer, a tool event
to its one card.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias, assert_never

from aistack_tui.agent import events as ev
from aistack_tui.llm import types as lt
from aistack_tui.llm.notes import is_model_only
from aistack_tui.tui.provider_errors import RetrySeries, failure_text, retry_what
from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.entries import (
    AssistantEntry,
    Entry,
    NoticeEntry,
    ShellEntry,
    ThinkingEntry,
    ToolEntry,
    UserEntry,
)
from aistack_tui.tui.widgets.messages import AssistantMessage
from aistack_tui.tui.widgets.status_bar import StatusBar
from aistack_tui.tui.widgets.todo_panel import TodoPanel, parse_todos
from aistack_tui.tui.widgets.tool_card import ToolCard

LIVE_OUTPUT_CHARS = 4000
"""How much of a running command's latest output a card keeps (it shows the last lines)."""
MAX_DETAIL_CHARS = 200_000
"""A card keeps this much of a result (what the model saw is paged at 30 kB already)."""
ATTACHED_PREFIX = '<attached-file path="'
SHELL_PREFIX = "<user-shell-command>"
SHELL_NOTE = re.compile(
    r'<user-shell-command>(?P<command>.*?)</user-shell-command>\n'
    r'<user-shell-output exit_code="(?P<code>-?\d+)">\n(?P<output>.*)\n</user-shell-output>',
    re.DOTALL,
)
BASH_FAILED = re.compile(r"\n\nExit code: -?[1-9]\d*\Z")
"""The end of a Bash result whose command exited non-zero (`tools/bash.py`)."""
HOOK_BLOCK_PREFIX = "Blocked by a PreToolUse hook:"
DENIED_PREFIX = "Permission denied: "
"""How the tool runner answers the model for a denied call."""
ANSWERED = (ev.TextDelta, ev.ThinkingDelta, ev.ToolCallRequested, ev.MessageAdded)
"""Events that mean a retried request is being answered."""
Level: TypeAlias = Literal["info", "warning", "error"]


def tool_summary(name: str, tool_input: dict[str, Any]) -> str:
    """A card's line for a call whose display is not known (replayed history)."""
    for key in ("file_path", "path", "command", "pattern", "url", "query", "description"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            first = value.splitlines()[0] if value.strip() else value
            return f"{name} {first[:120]}"
    return name


def shell_entry(note: str) -> ShellEntry | None:
    """A `!command` note (as the app hands it to the model) as the card it was shown as."""
    match = SHELL_NOTE.match(note)
    if match is None:
        return None
    return ShellEntry(match["command"], match["output"], int(match["code"]))


def user_block_entry(text: str) -> Entry | None:
    """What a user message's text block looks like in the transcript: the prompt, a
    📎 line for an attached file, a `!command` card; a note for the model is not shown."""
    if text.startswith(ATTACHED_PREFIX):
        path = text[len(ATTACHED_PREFIX) :].split('"', 1)[0]
        return NoticeEntry(f"📎 attached {path}")
    if text.startswith(SHELL_PREFIX):
        return shell_entry(text)
    if is_model_only(text):
        return None
    return UserEntry(text)


Replay: TypeAlias = Callable[[str, dict[str, Any], str, bool], "ev.ToolCallDisplay | None"]
"""How a stored call and its result look on a card (`LiveSession.replay_display`)."""


def history_entries(
    messages: Sequence[lt.Message], replay: Replay | None = None
) -> list[Entry]:
    """Entries for a resumed session's messages (frozen answers, finished tool cards,
    which `replay` makes look as they did live)."""
    entries: list[Entry] = []
    cards: dict[str, ToolEntry] = {}
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for message in messages:
        start = len(entries)
        shells: list[Entry] = []  # a `!command` ran before the prompt it rides with
        for block in message.content:
            match block:
                case lt.TextBlock(text=text) if text.strip() and message.role == "user":
                    entry = user_block_entry(text)
                    if isinstance(entry, ShellEntry):
                        shells.append(entry)
                    elif entry is not None:
                        entries.append(entry)
                case lt.TextBlock(text=text) if text.strip():
                    entries.append(AssistantEntry(text, finished=True))
                case lt.ToolUseBlock(id=tool_id, name=name, input=tool_input):
                    card = ToolEntry(tool_id, name, tool_summary(name, tool_input), "done")
                    cards[tool_id] = card
                    calls[tool_id] = (name, tool_input)
                    entries.append(card)
                case lt.ToolResultBlock(tool_use_id=tool_id, is_error=is_error) as result:
                    card = cards.get(tool_id)
                    if card is not None:
                        name, tool_input = calls[tool_id]
                        text = result.text()
                        display = replay(name, tool_input, text, is_error) if replay else None
                        _replayed(card, text, is_error, display)
                case _:
                    pass
        entries[start:start] = shells
    return entries


class EventRenderer:
    """Turns one run's events into conversation entries, card states and status updates."""

    def __init__(
        self, conversation: Conversation, status: StatusBar, todos: TodoPanel | None = None
    ) -> None:
        self.conversation = conversation
        self.status = status
        self.todos = todos
        self._answer: AssistantMessage | None = None
        self._thinking: ThinkingEntry | None = None
        self._queued: list[UserEntry] = []
        self.last_error: str = ""
        self._retry: RetrySeries | None = None
        self._retry_line: NoticeEntry | None = None
        """The one line a series of retries is shown on, updated as it goes."""

    # --- user-side actions the app reports -------------------------------------------------

    async def show_queued(self, text: str) -> None:
        """A steering message typed while the agent works: shown dimmed until delivered."""
        entry = UserEntry(text, queued=True)
        self._queued.append(entry)
        await self.conversation.add(entry)

    async def notice(self, text: str, level: Level = "info") -> None:
        await self.conversation.add(NoticeEntry(text, level))

    # --- the event dispatch -----------------------------------------------------------------

    async def handle(self, event: ev.AgentEvent) -> None:
        if self._retry is not None and isinstance(event, ANSWERED):
            self._retry_answered()
        match event:
            case ev.TurnStarted():
                self.status.set_busy("thinking")
            case ev.TextDelta(text=text):
                await self._write(text)
            case ev.ThinkingDelta(text=text):
                await self._think(text)
            case ev.StreamReset() as reset:
                await self._discard_answer()
                await self._retrying(reset)
            case ev.MessageAdded(message=message):
                await self._message_added(message)
            case ev.ToolCallRequested(tool_use_id=tool_id, name=name, input=tool_input):
                await self._finish_answer()
                display = event.display
                entry = ToolEntry(
                    tool_id,
                    name,
                    display.summary or tool_summary(name, tool_input),
                    diff=display.diff,
                    language=display.language,
                )
                await self.conversation.add(entry)
                if name == "TodoWrite" and self.todos is not None:
                    self.todos.set_todos(parse_todos(tool_input.get("todos")))
            case ev.PermissionAsked(tool_use_id=tool_id):
                self._update_card(tool_id, state="asking")
                self.status.set_busy("waiting for approval")
            case ev.PermissionDecided(tool_use_id=tool_id, behavior="deny", reason=reason):
                self._update_card(tool_id, state="denied", note=_first_line(reason))
            case ev.PermissionDecided(tool_use_id=tool_id):
                self._update_card(tool_id, state="pending")
            case ev.ToolStarted(tool_use_id=tool_id, name=name):
                self._update_card(tool_id, state="running", started_at=time.monotonic())
                self.status.set_busy(f"running {name}")
            case ev.ToolFinished(tool_use_id=tool_id, result=result, duration_s=duration):
                self._tool_finished(tool_id, result, duration, event.display)
            case ev.UsageUpdated() as usage:
                total = usage.session_usage
                self.status.update_usage(
                    total.input_tokens
                    + total.output_tokens
                    + total.cache_read_input_tokens
                    + total.cache_creation_input_tokens,
                    usage.context_tokens,
                    usage.context_window,
                    usage.session_cost_usd,
                )
            case ev.Notice(text=text, level=level):
                await self.notice(text, level)
            case ev.ErrorOccurred() as error:
                self.last_error = error.message
                await self._failed(error)
            case ev.SubagentEvent(tool_use_id=tool_id, description=description, event=child):
                await self._subagent(tool_id, description, child)
            case ev.TurnEnded(reason=reason):
                await self.end_run(reason)
            case ev.ToolInputDelta():
                pass  # the call's card appears once the model has finished it
            case _:
                assert_never(event)

    def tool_output(self, tool_id: str, text: str) -> None:
        """A line or more a running command printed: shown on its card as it runs."""
        entry = self.conversation.transcript.by_tool_id.get(tool_id)
        if entry is None or entry.state != "running":
            return
        entry.live_output = (entry.live_output + text)[-LIVE_OUTPUT_CHARS:]
        card = self.conversation.widget_of(entry)
        if isinstance(card, ToolCard):
            card.output_arrived()
            self.conversation.note_output()

    async def end_run(self, reason: str) -> None:
        """Settle the UI after a run: freeze the answer, clear the busy state."""
        await self._finish_answer(interrupted=reason == "interrupted")
        self._thinking = None
        self._retry = self._retry_line = None
        self.status.set_busy("")
        if reason == "interrupted":
            await self.notice("Interrupted — the partial answer was kept.", "warning")
        elif reason == "max_turns":
            await self.notice("Stopped: the maximum number of turns was reached.")

    async def _subagent(self, parent_id: str, description: str, event: ev.AgentEvent) -> None:
        """A `Task` subagent's event: a row in its parent card, never a top-level entry."""
        card = self.conversation.transcript.by_tool_id.get(parent_id)
        if card is None:
            return
        match event:
            case ev.TurnStarted():
                self.status.set_busy(f"{description}: thinking")
            case ev.ToolCallRequested(tool_use_id=tool_id, name=name, input=tool_input):
                summary = event.display.summary or tool_summary(name, tool_input)
                card.children.append(ToolEntry(tool_id, name, summary))
            case ev.PermissionAsked(tool_use_id=tool_id):
                _set_child(card, tool_id, state="asking")
                self.status.set_busy("waiting for approval")
            case ev.PermissionDecided(tool_use_id=tool_id, behavior="deny", reason=reason):
                _set_child(card, tool_id, state="denied", note=_first_line(reason))
            case ev.PermissionDecided(tool_use_id=tool_id):
                _set_child(card, tool_id, state="pending")
            case ev.ToolStarted(tool_use_id=tool_id, name=name):
                _set_child(card, tool_id, state="running")
                self.status.set_busy(f"{description}: {name}")
            case ev.ToolFinished(tool_use_id=tool_id, result=result, duration_s=duration):
                child = _child(card, tool_id)
                if child is not None:
                    _settle(child, result, duration)
                    if event.display is not None and event.display.summary:
                        child.summary = event.display.summary
            case ev.Notice(text=text, level=level):
                await self.notice(f"{description}: {text}", level)
            case ev.ErrorOccurred(message=message, kind=kind):
                text = failure_text(kind, event.provider, event.status_code, message)
                card.child_end = _first_line(text)
            case ev.TurnEnded(reason=reason, num_turns=turns):
                ended = "done" if reason == "completed" else reason.replace("_", " ")
                if not (card.child_end and reason == "error"):
                    card.child_end = f"{ended} after {turns} turn{'s' if turns != 1 else ''}"
            case (
                ev.TextDelta() | ev.ThinkingDelta() | ev.StreamReset() | ev.MessageAdded()
                | ev.UsageUpdated() | ev.SubagentEvent() | ev.ToolInputDelta()
            ):
                return  # the card shows calls and their ends, not the child's text
            case _:
                assert_never(event)
        self.conversation.sync(card)

    # --- helpers ----------------------------------------------------------------------------

    async def _retrying(self, reset: ev.StreamReset) -> None:
        """A failed attempt: one line per series (updated), the countdown on the status."""
        what = retry_what(reset.kind, reset.provider, reset.status_code, reset.reason)
        if self._retry is None:
            self._retry = RetrySeries(what)
        self._retry.what = what
        text = self._retry.retrying(reset.attempt, reset.delay)
        if self._retry_line is None:
            self._retry_line = NoticeEntry(text, "warning")
            await self.conversation.add(self._retry_line)
        else:
            self._retry_line.text = text
            self.conversation.sync(self._retry_line)
        self.status.count_down(what, reset.delay)

    def _retry_answered(self) -> None:
        if self._retry is not None and self._retry_line is not None:
            self._retry_line.text = self._retry.answered()
            self._retry_line.level = "info"
            self.conversation.sync(self._retry_line)
        self._retry = self._retry_line = None

    async def _failed(self, error: ev.ErrorOccurred) -> None:
        """A run-ending error: on the retry series' line when it ends one, else its own."""
        if self._retry is not None and self._retry_line is not None and error.retryable:
            self._retry.what = retry_what(error.kind, error.provider, error.status_code,
                                          error.message)
            self._retry_line.text = self._retry.gave_up()
            self._retry_line.level = "error"
            self.conversation.sync(self._retry_line)
            self._retry = self._retry_line = None
            return
        self._retry = self._retry_line = None
        text = failure_text(error.kind, error.provider, error.status_code, error.message)
        await self.notice(text, "error")

    async def _write(self, text: str) -> None:
        if self._answer is None:
            self._thinking = None
            self.status.set_busy("writing")
            widget = await self.conversation.add(AssistantEntry())
            assert isinstance(widget, AssistantMessage)
            self._answer = widget
        await self._answer.write(text)
        self.conversation.note_output()

    async def _think(self, text: str) -> None:
        if self._thinking is None:
            self._thinking = ThinkingEntry()
            await self.conversation.add(self._thinking)
        self._thinking.text += text
        self.conversation.sync(self._thinking)

    async def _discard_answer(self) -> None:
        if self._answer is not None:
            answer, self._answer = self._answer, None
            await self.conversation.remove_entry(answer.entry)
        if self._thinking is not None:
            thinking, self._thinking = self._thinking, None
            await self.conversation.remove_entry(thinking)

    async def _finish_answer(self, *, interrupted: bool = False) -> None:
        if self._answer is not None:
            answer, self._answer = self._answer, None
            answer.entry.interrupted = interrupted
            await answer.freeze()

    async def _message_added(self, message: lt.Message) -> None:
        if message.role == "assistant":
            text = message.text()
            if self._answer is None and text.strip():
                # Nothing was streamed (a provider that answered in one piece).
                await self.conversation.add(AssistantEntry(text, finished=True))
            elif self._answer is not None:
                self._answer.entry.text = text or self._answer.entry.text
                interrupted = message.stop_reason == "interrupted"
                await self._finish_answer(interrupted=interrupted)
            return
        for block in message.content:
            if not isinstance(block, lt.TextBlock) or not block.text.strip():
                continue
            entry = user_block_entry(block.text)
            if isinstance(entry, UserEntry):
                await self._user_text(block.text)
            elif isinstance(entry, NoticeEntry):
                await self.conversation.add(entry)
            # a `!command` card is on screen since it ran; other notes are the model's

    async def _user_text(self, text: str) -> None:
        for queued in self._queued:
            if queued.text.strip() and queued.text.strip() in text:
                queued.queued = False
                self.conversation.sync(queued)
                self._queued.remove(queued)
                return
        await self.conversation.add(UserEntry(text))

    def _update_card(self, tool_id: str, **changes: Any) -> None:
        entry = self.conversation.transcript.by_tool_id.get(tool_id)
        if entry is None:
            return
        for key, value in changes.items():
            setattr(entry, key, value)
        self.conversation.sync(entry)

    def _tool_finished(
        self,
        tool_id: str,
        result: lt.ToolResultBlock,
        duration: float,
        display: Any,
    ) -> None:
        entry = self.conversation.transcript.by_tool_id.get(tool_id)
        if entry is None:
            return
        _settle(entry, result, duration)
        entry.live_output = ""
        text = result.text()
        if display is not None:
            entry.summary = display.summary or entry.summary
            entry.detail = display.detail or text
            entry.diff = display.diff or entry.diff
            entry.language = display.language or entry.language
        else:
            entry.detail = text
        entry.detail = entry.detail[:MAX_DETAIL_CHARS]
        self.conversation.sync(entry)
        self.status.set_busy("thinking")

    @property
    def streaming(self) -> bool:
        return self._answer is not None

    def pending_steering(self) -> list[str]:
        return [q.text for q in self._queued]


def _replayed(
    card: ToolEntry, text: str, is_error: bool, display: ev.ToolCallDisplay | None
) -> None:
    """A stored call's card settled as `_tool_finished` settles a live one."""
    if is_error and text.startswith(DENIED_PREFIX):
        card.state = "denied"
        card.note = _first_line(text[len(DENIED_PREFIX):])
    else:
        _settle(card, lt.ToolResultBlock(tool_use_id=card.tool_use_id, content=text,
                                         is_error=is_error), 0.0)
        card.duration_s = None  # not known for a stored call
    if display is not None:
        card.summary = display.summary or card.summary
        card.detail = display.detail or text
        card.diff = display.diff or card.diff
        card.language = display.language or card.language
    else:
        card.detail = text
    card.detail = card.detail[:MAX_DETAIL_CHARS]


def _child(card: ToolEntry, tool_id: str) -> ToolEntry | None:
    return next((c for c in card.children if c.tool_use_id == tool_id), None)


def _set_child(card: ToolEntry, tool_id: str, **changes: Any) -> None:
    child = _child(card, tool_id)
    if child is not None:
        for key, value in changes.items():
            setattr(child, key, value)


def _settle(entry: ToolEntry, result: lt.ToolResultBlock, duration: float) -> None:
    """A finished call's state and note; a PreToolUse hook's block shows as a denial."""
    entry.duration_s = duration
    if entry.state == "denied":
        return
    text = result.text()
    if result.is_error and text.startswith(HOOK_BLOCK_PREFIX):
        entry.state = "denied"
        entry.note = _first_line("hook: " + text[len(HOOK_BLOCK_PREFIX):].strip())
    elif result.is_error:
        entry.state = "failed"
        entry.note = _first_line(text)
    elif entry.name == "Bash" and BASH_FAILED.search(text):
        # The model reads a failing command's output as any other (not an error), but
        # a card saying "✓ npm run test (exit 254)" would tell the user it passed.
        entry.state = "failed"
    else:
        entry.state = "done"


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
