"""The scrolling conversation, windowed so long sessions stay as fast as new ones.

Every entry of the session lives in a `Transcript`, but only the newest `window` entries
have mounted widgets. When more arrive while the view follows the bottom, the oldest
widgets are unmounted (their entries stay); a marker at the top says how many are hidden
and scrolling to the top (or clicking the marker) mounts an earlier page. Layout work is
therefore bounded by the window, not by the history — Textual re-lays-out every child of
a container when one grows, which is what makes 2,000-message transcripts stall.

The view follows the bottom (Textual's anchor) until the user scrolls up; then new
output never moves what they are reading, and a "↓ new output" line docked at the bottom
says there is more. Scrolling back to the end (or submitting anything) follows again.
"""

from __future__ import annotations

from textual import events
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from aistack_tui.tui.widgets.entries import (
    AssistantEntry,
    Entry,
    NoticeEntry,
    ShellEntry,
    ThinkingEntry,
    ToolEntry,
    Transcript,
    UserEntry,
)

DEFAULT_WINDOW = 60
PAGE = 30


def widget_for(entry: Entry) -> Widget:
    # The message widgets bring markdown-it, Rich's markdown and syntax and pygments: they
    # are imported with the first entry, not before the empty conversation's first frame.
    from aistack_tui.tui.widgets.messages import (
        AssistantMessage,
        FrozenAnswer,
        NoticeMessage,
        ShellMessage,
        ThinkingMessage,
        UserMessage,
    )
    from aistack_tui.tui.widgets.tool_card import ToolCard

    match entry:
        case UserEntry():
            return UserMessage(entry)
        case AssistantEntry(finished=True):
            return FrozenAnswer(entry)
        case AssistantEntry():
            return AssistantMessage(entry)
        case ThinkingEntry():
            return ThinkingMessage(entry)
        case ToolEntry():
            return ToolCard(entry)
        case NoticeEntry():
            return NoticeMessage(entry)
        case ShellEntry():
            return ShellMessage(entry)


class EarlierMarker(Static):
    """Says how many entries are hidden above; a click shows another page."""

    def on_click(self, event: events.Click) -> None:
        event.stop()
        conversation = self.parent
        if isinstance(conversation, Conversation):
            conversation.show_earlier()


class NewOutputMarker(Static):
    """Docked at the bottom while the user reads above and output keeps arriving."""

    def on_click(self, event: events.Click) -> None:
        event.stop()
        conversation = self.parent
        if isinstance(conversation, Conversation):
            conversation.follow()


class Conversation(VerticalScroll):
    """Mounts a window of the transcript's entries and follows the bottom while streaming."""

    can_focus = False

    def __init__(self, window: int = DEFAULT_WINDOW, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.transcript = Transcript()
        self.window = window
        self._widgets: dict[int, Widget] = {}  # id(entry) -> mounted widget
        self._first = 0  # index of the first mounted entry
        self._marker = EarlierMarker("", classes="earlier-marker")
        self._new_output = NewOutputMarker(
            "↓ new output — End or click to follow", classes="new-output-marker"
        )

    def on_mount(self) -> None:
        self._marker.display = False
        self._new_output.display = False
        self.mount(self._marker, self._new_output)
        self.anchor()

    # --- following the bottom ------------------------------------------------------------

    @property
    def following(self) -> bool:
        """Whether new output scrolls into view (the user has not scrolled up)."""
        return self._following()

    @property
    def new_output_waiting(self) -> bool:
        return bool(self._new_output.display)

    def follow(self) -> None:
        """Jump to the bottom and follow new output again (submit, End, the marker)."""
        self._new_output.display = False
        self.anchor()

    def note_output(self) -> None:
        """Something below changed (an entry, streamed text, a card): if the user reads
        above, say so instead of moving the view."""
        if not self._new_output.display and not self._following():
            self._new_output.display = True

    # --- adding and updating -------------------------------------------------------------

    async def add(self, entry: Entry) -> Widget:
        """Append an entry and mount its widget at the bottom."""
        self.transcript.add(entry)
        widget = widget_for(entry)
        self._widgets[id(entry)] = widget
        await self.mount(widget)
        self.note_output()
        await self._trim()
        return widget

    async def load(self, entries: list[Entry]) -> None:
        """Replace the content with a whole history, mounting only its newest window."""
        await self.clear()
        self._new_output.display = False
        for entry in entries:
            self.transcript.add(entry)
        self._first = max(0, len(self.transcript.entries) - self.window)
        widgets = [widget_for(e) for e in self.transcript.entries[self._first :]]
        for entry, widget in zip(self.transcript.entries[self._first :], widgets, strict=True):
            self._widgets[id(entry)] = widget
        if widgets:
            await self.mount_all(widgets)
        self._update_marker()
        self.scroll_end(animate=False)
        self.anchor()

    async def clear(self) -> None:
        """Forget every entry (`/clear`)."""
        widgets = list(self._widgets.values())
        self._widgets.clear()
        self.transcript = Transcript()
        self._first = 0
        if widgets:
            await self.remove_children(widgets)
        self._update_marker()

    def widget_of(self, entry: Entry) -> Widget | None:
        return self._widgets.get(id(entry))

    async def remove_entry(self, entry: Entry) -> None:
        """Drop an entry (a streamed answer discarded because the stream is retried)."""
        widget = self._widgets.pop(id(entry), None)
        entries = self.transcript.entries
        for i, candidate in enumerate(entries):
            if candidate is entry:
                del entries[i]
                if i < self._first:
                    self._first -= 1
                break
        if widget is not None:
            await widget.remove()

    def sync(self, entry: Entry) -> None:
        """Redraw the widget of an entry the renderer changed, if it is mounted."""
        from aistack_tui.tui.widgets.messages import NoticeMessage, ThinkingMessage, UserMessage
        from aistack_tui.tui.widgets.tool_card import ToolCard

        widget = self._widgets.get(id(entry))
        if isinstance(widget, ToolCard | UserMessage | ThinkingMessage | NoticeMessage):
            widget.sync()
            self.note_output()

    @property
    def mounted_count(self) -> int:
        return len(self._widgets)

    @property
    def hidden_count(self) -> int:
        return self._first

    # --- windowing -----------------------------------------------------------------------

    async def _trim(self) -> None:
        """Unmount the oldest widgets when the window overflows and the view follows."""
        overflow = len(self._widgets) - (self.window + PAGE)
        if overflow <= 0 or not self._following():
            return
        entries = self.transcript.entries
        old: list[Widget] = []
        while len(self._widgets) > self.window and self._first < len(entries):
            widget = self._widgets.pop(id(entries[self._first]), None)
            if widget is not None:
                old.append(widget)
            self._first += 1
        if old:
            await self.remove_children(old)
        self._update_marker()

    def _following(self) -> bool:
        following_anchor = self._anchored and not self._anchor_released
        return following_anchor or self.is_vertical_scroll_end or self.max_scroll_y == 0

    def show_earlier(self) -> None:
        self.run_worker(self._show_earlier(), group="conversation-window", exclusive=True)

    async def _show_earlier(self) -> None:
        if self._first == 0:
            return
        start = max(0, self._first - PAGE)
        entries = self.transcript.entries[start : self._first]
        widgets = [widget_for(e) for e in entries]
        for entry, widget in zip(entries, widgets, strict=True):
            self._widgets[id(entry)] = widget
        anchor_widget = self._widgets.get(id(self.transcript.entries[self._first]))
        self._first = start
        self.release_anchor()
        await self.mount_all(widgets, after=self._marker)
        self._update_marker()
        if anchor_widget is not None:
            self.call_after_refresh(self.scroll_to_widget, anchor_widget, animate=False, top=True)

    def _update_marker(self) -> None:
        self._marker.display = self._first > 0
        if self._first:
            self._marker.update(
                f"▲ {self._first} earlier entries — scroll up or click to show more"
            )

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and self._first > 0:
            self.show_earlier()
        if self._new_output.display and self.is_vertical_scroll_end:
            self._new_output.display = False
