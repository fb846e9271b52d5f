"""Widgets for conversation entries: user text, assistant markdown, thinking, notices.

An assistant answer is rendered with Rich's `Markdown` from its first token, so what you
see while it streams is exactly what stays on screen afterwards. Streaming cost is kept
flat however long the answer grows: the answer is a column of *frozen parts* (rendered
once per width and never touched again) above one *live tail* that holds only the
still-open markdown. Fragments are coalesced and the tail re-rendered at most 30 times a
second (less often when frames are slow); once the tail holds enough complete top-level
blocks they move into a new frozen part, and frozen parts are merged eight at a time so
a long answer stays a handful of widgets. Per-frame work is therefore bounded by the
tail, not by the answer, and finishing an answer renders only its last part.

Why not Textual's `MarkdownStream`: it keeps every block of the answer as a
live widget and each append lays all of them out again; measured with
`bench/tui_stream.py`, a 5,000-token answer at 500 tokens/s fell seconds behind, and the
swap to a static render at the end re-rendered the whole document at once (and changed
its look, Textual's markdown styles not being Rich's).
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass
from typing import ClassVar

from markdown_it import MarkdownIt
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, MarkdownElement
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static

from aistack_tui.tui.hanging import hang_wrap
from aistack_tui.tui.widgets.entries import (
    AssistantEntry,
    NoticeEntry,
    ShellEntry,
    ThinkingEntry,
    UserEntry,
)
from aistack_tui.tui.widgets.selectable import SelectableStatic, not_copied

CODE_THEME = "monokai"
FLUSH_INTERVAL_S = 1 / 30
MAX_FLUSH_INTERVAL_S = 0.1
FREEZE_CHARS = 250
"""Complete blocks the live tail may hold before they are moved into a frozen part."""
MERGE_FAN_IN = 8
MAX_MERGE_LEVEL = 2
"""Frozen parts are merged eight at a time (and merges eight at a time again, up to 64
parts, some 600 lines, in one widget), so a long answer is a handful of widgets: Textual
lays out every widget on every frame."""
INTERRUPTED_SUFFIX = "\n\n*(interrupted)*"
SHELL_PREVIEW_LINES = 40
"""Lines of a `!command`'s output shown before "show all" (as a Bash card shows)."""


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


@functools.lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | None:
    """Pygments lexers by name, looked up once: Rich's `Syntax` looks its lexer up again
    on every render (several milliseconds each), which a live code block pays per frame."""
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)
    except ClassNotFound:
        return None


class _CodeBlock(CodeBlock):
    """Rich's code block, highlighted with a cached lexer (same settings as Rich's).

    Its padding (a blank row above and below, a column on the left) is drawn but marked
    `not_copied`, so copying the block gives the code as written (`selectable.stamp`).
    """

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        lexer = _lexer(self.lexer_name) or self.lexer_name
        syntax = Syntax(code, lexer, theme=self.theme, word_wrap=True, padding=1)
        lines = console.render_lines(syntax, options, pad=False, new_lines=False)
        last = len(lines) - 1
        for y, line in enumerate(lines):
            if y in (0, last):  # the padding rows
                yield from (not_copied(segment) for segment in line)
            else:
                yield from _left_padding_not_copied(line)
            yield _NEW_LINE


def _left_padding_not_copied(line: list[Segment]) -> list[Segment]:
    """`line` with its first cell (Syntax's left padding) marked `not_copied`."""
    if not line or not line[0].text:
        return line
    first = line[0]
    pad, rest = first.text[:1], first.text[1:]
    head = [not_copied(Segment(pad, first.style))]
    return head + ([Segment(rest, first.style)] if rest else []) + line[1:]


class AnswerMarkdown(RichMarkdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **RichMarkdown.elements,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }


def frozen_markdown(text: str) -> RichMarkdown:
    return AnswerMarkdown(text, code_theme=CODE_THEME, hyperlinks=False)


class MarkdownPart:
    """One part of an answer cut at a top-level block boundary, rendered once per width.

    Rich puts a blank line between two top-level blocks; a part rendered on its own
    would lose it. `after_block` restores it (unless Rich already starts the part with
    one, as it does for a list, table or quote), so the parts stacked read exactly like
    the whole answer rendered at once.

    Textual renders a widget's content twice per change (once to measure its height,
    once to draw it); the segments are kept per width so the markdown is parsed and
    highlighted only once.
    """

    def __init__(self, text: str, *, after_block: bool = False) -> None:
        self.text = text  # parsed again only for another width: the tokens are not kept
        self.after_block = after_block
        self._rendered: tuple[tuple[int, int], list[Segment]] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = (id(console), options.max_width)
        if self._rendered is None or self._rendered[0] != key:
            self._rendered = key, self._render(console, options)
        return self._rendered[1]

    def _render(self, console: Console, options: ConsoleOptions) -> list[Segment]:
        segments = list(console.render(frozen_markdown(self.text), options))
        if self.after_block and segments and segments[0] != _NEW_LINE:
            segments.insert(0, _NEW_LINE)
        return segments


class MarkdownParts:
    """Several frozen parts shown by one widget, from the parts' rendered segments."""

    def __init__(self, parts: list[MarkdownPart]) -> None:
        self.parts = parts

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for part in self.parts:
            yield from part.__rich_console__(console, options)


@dataclass(slots=True)
class _Frozen:
    widget: SelectableStatic
    parts: list[MarkdownPart]
    level: int


_NEW_LINE = Segment.line()
_BLOCK_PARSER = MarkdownIt().enable("strikethrough").enable("table")  # as Rich parses


def split_complete_blocks(text: str) -> tuple[int, bool]:
    """Where the complete top-level blocks of `text` end, and whether a blank line
    follows them when rendered.

    Returns `(offset, blank)`: `text[:offset]` is every top-level block before the last
    one (only the last can still change as text is appended, e.g. an open code fence or
    a growing list), `blank` is False when the block before the cut is a horizontal
    rule (Rich puts no blank line after one). `(0, False)` when there is nothing to cut.
    """
    if "\r" in text:  # markdown-it counts a lone CR as a line break; keep it simple
        return 0, False
    blocks = [
        (token.map[0], token.type)
        for token in _BLOCK_PARSER.parse(text)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]
    if len(blocks) < 2 or blocks[-1][0] == 0:
        return 0, False
    last_line = blocks[-1][0]
    offset = -1
    for _ in range(last_line):
        offset = text.index("\n", offset + 1)
    return offset + 1, blocks[-2][1] != "hr"


class FrozenAnswer(SelectableStatic):
    """A finished answer from the history: one widget (an `AssistantMessage` is two or
    more), because every mounted widget is laid out again on every frame."""

    def __init__(self, entry: AssistantEntry) -> None:
        self.entry = entry
        suffix = INTERRUPTED_SUFFIX if entry.interrupted else ""
        super().__init__(MarkdownPart(entry.text + suffix), classes="assistant-message")


class AssistantMessage(Vertical):
    """An answer: frozen parts above a live tail while streaming, frozen once finished."""

    def __init__(self, entry: AssistantEntry) -> None:
        super().__init__(classes="assistant-message")
        self.entry = entry
        self._live: SelectableStatic | None = None
        self._live_part: MarkdownPart | None = None
        self._offset = 0
        """`entry.text[:_offset]` is rendered in frozen parts; the rest in the live tail."""
        self._frozen_text = ""
        """What the frozen parts show (the entry's text may be replaced at the end)."""
        self._after_block = False
        """Whether the live tail starts after a frozen block (then it opens with a blank)."""
        self._live_text = ""
        self._frozen: list[_Frozen] = []
        self._shown = 0
        self._next_check = FREEZE_CHARS
        self._flush_timer: Timer | None = None
        self._frame_cost = 0.0
        """How long the last flush took until it was on screen (layout and paint)."""
        self._lock = asyncio.Lock()

    @property
    def shown_chars(self) -> int:
        """How much of the answer has been handed to the screen (for tests and benches)."""
        return self._shown

    def compose(self) -> ComposeResult:
        if self.entry.finished:
            yield self._frozen_whole()
        else:
            self._shown = len(self.entry.text)
            self._live_text = self.entry.text
            self._live_part = MarkdownPart(self.entry.text)
            self._live = SelectableStatic(self._live_part, classes="live", live=True)
            yield self._live

    def _frozen_whole(self) -> SelectableStatic:
        suffix = INTERRUPTED_SUFFIX if self.entry.interrupted else ""
        return SelectableStatic(MarkdownPart(self.entry.text + suffix), classes="frozen")

    async def write(self, fragment: str) -> None:
        """Append streamed text; the entry keeps the full text for freezing and /copy.

        Fragments are coalesced and the live tail re-rendered at most 30 times a second,
        and never more often than every two frame-costs: when a frame is slow (a big
        terminal, a loaded machine) the UI still spends at most about half its time
        painting, so tokens and keys never queue up behind frames.
        """
        self.entry.text += fragment
        if self._live is None or self._flush_timer is not None:
            return
        delay = min(MAX_FLUSH_INTERVAL_S, max(FLUSH_INTERVAL_S, 2 * self._frame_cost))
        self._flush_timer = self.set_timer(delay, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        started = time.perf_counter()
        async with self._lock:
            if self._live is None or self.entry.finished:
                return
            tail = self.entry.text[self._offset :]
            if len(tail) < self._next_check or not await self._freeze_complete_blocks(tail):
                self._show_live(tail)
            self._shown = len(self.entry.text)
        self.call_after_refresh(self._painted, started)

    def _painted(self, started: float) -> None:
        self._frame_cost = time.perf_counter() - started

    async def _freeze_complete_blocks(self, tail: str) -> bool:
        """Move the tail's complete blocks into a frozen part, if there are enough, and
        show the rest in the live tail (in one screen update, so nothing jumps)."""
        assert self._live is not None
        cut, blank_after = split_complete_blocks(tail)
        if cut < FREEZE_CHARS:
            # The last block is long (a big code fence): look again after more text.
            self._next_check = len(tail) + FREEZE_CHARS // 2
            return False
        part = MarkdownPart(tail[:cut], after_block=self._after_block)
        widget = SelectableStatic(part, classes="frozen")
        with self.app.batch_update():
            await self.mount(widget, before=self._live)
            self._frozen.append(_Frozen(widget, [part], 0))
            await self._merge()
            self._offset += cut
            self._frozen_text += tail[:cut]
            self._after_block = blank_after
            self._show_live(self.entry.text[self._offset :])
        self._next_check = FREEZE_CHARS
        return True

    async def _merge(self) -> None:
        """Once a level holds `2 * MERGE_FAN_IN` frozen widgets, merge its oldest
        `MERGE_FAN_IN` into one widget of the next level.

        The oldest, because they are the ones scrolled out of view: Textual renders a
        visible widget's every line, and a merged widget is big. The merged widget shows
        the parts' already rendered segments; nothing is parsed or highlighted again.
        Widgets stay in order of level (oldest and biggest first).
        """
        for level in range(MAX_MERGE_LEVEL):
            indexes = [i for i, frozen in enumerate(self._frozen) if frozen.level == level]
            if len(indexes) < 2 * MERGE_FAN_IN:
                continue
            start = indexes[0]
            group = self._frozen[start : start + MERGE_FAN_IN]
            parts = [part for frozen in group for part in frozen.parts]
            widget = SelectableStatic(MarkdownParts(parts), classes="frozen")
            await self.mount(widget, before=group[0].widget)
            await self.remove_children([frozen.widget for frozen in group])
            self._frozen[start : start + MERGE_FAN_IN] = [_Frozen(widget, parts, level + 1)]

    def _show_live(self, tail: str) -> None:
        assert self._live is not None
        self._live_part = MarkdownPart(tail, after_block=self._after_block)
        self._live.show_live(self._live_part)
        self._live_text = tail

    async def freeze(self) -> None:
        """Stop streaming and render the rest of the answer as a frozen part.

        Only the tail is rendered again, unless the final text no longer extends what was
        already frozen (the model's final message differs): then the whole answer is.
        """
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        async with self._lock:
            self.entry.finished = True
            live, self._live = self._live, None
            if live is None:
                return
            suffix = INTERRUPTED_SUFFIX if self.entry.interrupted else ""
            with self.app.batch_update():
                if self.entry.text.startswith(self._frozen_text):
                    tail = self.entry.text[self._offset :] + suffix
                    part = self._live_part
                    if part is None or tail != self._live_text:  # else it is rendered already
                        part = MarkdownPart(tail, after_block=self._after_block)
                    live.set_renderable(part)
                    live.set_classes("frozen")
                else:
                    await self.remove_children()
                    self._frozen.clear()
                    await self.mount(self._frozen_whole())
            self._shown = len(self.entry.text)


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
    """A line from aistack itself; a retry series' line is updated in place (`sync`)."""

    def __init__(self, entry: NoticeEntry) -> None:
        self.entry = entry
        super().__init__(self._content(), classes=f"notice -{entry.level}")

    def _content(self, width: int = 0) -> Text:
        """The notice, wrapped at `width` (0: not laid out yet, the terminal wraps)."""
        icon = {"info": "ℹ", "warning": "⚠", "error": "✗"}[self.entry.level]
        return Text(f"{icon} {hang_wrap(self.entry.text, width, width - 2)}")

    def on_resize(self, event: events.Resize) -> None:
        self.update(self._content(self.content_size.width))  # wrapped again at the new width

    def sync(self) -> None:
        for level in ("info", "warning", "error"):
            self.set_class(self.entry.level == level, f"-{level}")
        self.update(self._content(self.content_size.width))


class ShellMessage(Static, can_focus=True):
    """A `!command` and its output, capped like a Bash card's: the first lines, and how
    many more (Enter or a click shows them all, again hides them)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_output", "Show all", show=False)
    ]

    def __init__(self, entry: ShellEntry) -> None:
        self.entry = entry
        super().__init__(self._content(), classes="shell-output")

    def _content(self) -> Text:
        entry = self.entry
        body = Text(f"! {entry.command}\n", style="bold")
        lines = entry.output.rstrip().splitlines()
        limit = len(lines) if entry.full else SHELL_PREVIEW_LINES
        body.append("\n".join(lines[:limit]))
        if len(lines) > limit:
            body.append(f"\n… {len(lines) - limit} more lines — Enter shows all", style="dim")
        if entry.exit_code:
            body.append(f"\n(exit {entry.exit_code})", style="red")
        return body

    def action_toggle_output(self) -> None:
        if len(self.entry.output.rstrip().splitlines()) > SHELL_PREVIEW_LINES:
            self.entry.full = not self.entry.full
            self.update(self._content())

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if self.text_selection is None:  # the end of a drag selects, it does not toggle
            self.action_toggle_output()
