"""Widgets for conversation entries: user text, assistant markdown, thinking, notices.

An assistant answer streams into a Textual `Markdown` through `MarkdownStream` (which
batches fragments when tokens arrive faster than frames). When the answer is finished it
is frozen: the live block widgets are replaced by one `Static` holding a Rich rendering,
laid out once per width and never touched again, so a long history costs no per-token
work.
"""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from aistack_tui.tui.widgets.entries import (
    AssistantEntry,
    NoticeEntry,
    ShellEntry,
    ThinkingEntry,
    UserEntry,
)

CODE_THEME = "monokai"
FLUSH_INTERVAL_S = 1 / 30


class UserMessage(Static):
    """The user's prompt (or a queued steering message, dimmed until delivered)."""

    def __init__(self, entry: UserEntry) -> None:
        self.entry = entry
        super().__init__(self._content(), classes="user-message")
        self.set_class(entry.queued, "-queued")

    def _content(self) -> Text:
        prefix = "⏳ " if self.entry.queued else "› "
        return Text(prefix + self.entry.text)

    def sync(self) -> None:
        self.set_class(self.entry.queued, "-queued")
        self.update(self._content())


def frozen_markdown(text: str) -> RichMarkdown:
    return RichMarkdown(text, code_theme=CODE_THEME, hyperlinks=False)


class AssistantMessage(Vertical):
    """An answer: live markdown while streaming, a frozen static render once finished."""

    def __init__(self, entry: AssistantEntry) -> None:
        super().__init__(classes="assistant-message")
        self.entry = entry
        self._markdown: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []
        self._flush_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        if self.entry.finished:
            yield self._frozen()
        else:
            self._markdown = Markdown(self.entry.text, classes="live")
            yield self._markdown

    def _frozen(self) -> Static:
        suffix = "\n\n*(interrupted)*" if self.entry.interrupted else ""
        return Static(frozen_markdown(self.entry.text + suffix), classes="frozen")

    async def write(self, fragment: str) -> None:
        """Append streamed text; the entry keeps the full text for freezing and /copy.

        Fragments are coalesced and handed to the markdown stream at most 30 times a
        second: per-token appends would make every token pay for a markdown parse.
        """
        self.entry.text += fragment
        if self._markdown is None:
            return
        self._pending.append(fragment)
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_INTERVAL_S, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        if not self._pending or self._markdown is None:
            return
        text = "".join(self._pending)
        self._pending.clear()
        if self._stream is None:
            self._stream = Markdown.get_stream(self._markdown)
        await self._stream.write(text)

    async def freeze(self) -> None:
        """Stop streaming and swap the live blocks for one static render."""
        self.entry.finished = True
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        self._pending.clear()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._markdown is not None:
            await self._markdown.remove()
            self._markdown = None
            await self.mount(self._frozen())


class ThinkingMessage(Static):
    """Model reasoning, dimmed and cut to its last lines so it never dominates."""

    def __init__(self, entry: ThinkingEntry) -> None:
        self.entry = entry
        super().__init__(self._content(), classes="thinking")

    def _content(self) -> Text:
        lines = self.entry.text.strip().splitlines()
        shown = "\n".join(lines[-6:])
        return Text("✻ " + shown, style="italic")

    def sync(self) -> None:
        self.update(self._content())


class NoticeMessage(Static):
    def __init__(self, entry: NoticeEntry) -> None:
        self.entry = entry
        icon = {"info": "ℹ", "warning": "⚠", "error": "✗"}[entry.level]
        super().__init__(Text(f"{icon} {entry.text}"), classes=f"notice -{entry.level}")


class ShellMessage(Static):
    def __init__(self, entry: ShellEntry) -> None:
        self.entry = entry
        body = Text(f"! {entry.command}\n", style="bold")
        body.append(entry.output.rstrip()[-4000:])
        if entry.exit_code:
            body.append(f"\n(exit {entry.exit_code})", style="red")
        super().__init__(body, classes="shell-output")
