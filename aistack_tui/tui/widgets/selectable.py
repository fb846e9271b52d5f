"""Mouse selection for widgets that show Rich renderables (answers, tool output).

Textual selects text only in widgets whose lines carry an `offset` in their style's
meta (its `Content` adds it; a Rich `Markdown` or `Syntax` does not) and highlights it
only for `Content`. `SelectableRender` wraps any renderable: it renders it once per
width, stamps every segment with its (column, line) in the rendered text and keeps that
text, so `get_selection` copies exactly what is shown (markdown without its markup).
Decoration that is drawn but is not part of the text (a code block's padding) is marked
with `not_copied`: it gets no offset and is left out of the copied text, and a row made
only of it is dropped from a copy. `SelectableStatic` paints the selection over its lines.

The stamping is done once per width and renderable, so it costs nothing per frame; the
live tail of a streaming answer is not wrapped (it changes 30 times a second) and becomes
selectable once frozen.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style as TextualStyle
from textual.widget import Widget
from textual.widgets import Static

_NEW_LINE = Segment.line()
_NOT_COPIED = Style.from_meta({"not_copied": True})


def not_copied(segment: Segment) -> Segment:
    """`segment` marked as drawn but not part of the copied text."""
    style = segment.style + _NOT_COPIED if segment.style is not None else _NOT_COPIED
    return Segment(segment.text, style, segment.control)


def _is_not_copied(segment: Segment) -> bool:
    meta = segment.style.meta if segment.style is not None else None
    return bool(meta and meta.get("not_copied"))


class SelectableRender:
    """A renderable whose rendered lines say where each character is (for selection)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self.plain = ""
        """The text as last rendered, one line per screen line, trailing blanks cut."""
        self.decoration_rows: frozenset[int] = frozenset()
        """Rows drawn only with `not_copied` segments: left out of a copy."""
        self._rendered: tuple[tuple[int, int], Stamped] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = (id(console), options.max_width)
        if self._rendered is None or self._rendered[0] != key:
            lines = console.render_lines(self.renderable, options, pad=False, new_lines=False)
            self._rendered = key, stamp(lines)
        stamped = self._rendered[1]
        self.plain, self.decoration_rows = stamped.plain, stamped.decoration_rows
        return stamped.segments

    def copied_text(self, selection: Selection) -> str:
        """What `selection` copies: the selected text without decoration-only rows."""
        return copied_text(selection, self.plain, self.decoration_rows)


class Stamped(NamedTuple):
    """A render stamped for selection: segments, the plain text, decoration rows."""

    segments: list[Segment]
    plain: str
    decoration_rows: frozenset[int]


def stamp(lines: list[list[Segment]]) -> Stamped:
    """The lines as one segment list with `offset` meta, and their plain text.

    A `not_copied` segment keeps its look but gets no offset and adds nothing to the
    text (the columns after it count from where it started)."""
    out: list[Segment] = []
    texts: list[str] = []
    decoration: set[int] = set()
    for y, line in enumerate(lines):
        x = 0
        text: list[str] = []
        drawn_only = bool(line)
        for segment in line:
            if segment.control or _is_not_copied(segment):
                out.append(segment)
                continue
            drawn_only = False
            meta = Style.from_meta({"offset": (x, y)})
            style = segment.style + meta if segment.style is not None else meta
            out.append(Segment(segment.text, style))
            text.append(segment.text)
            x += len(segment.text)
        out.append(_NEW_LINE)
        texts.append("".join(text).rstrip())
        if drawn_only:
            decoration.add(y)
    return Stamped(out, "\n".join(texts), frozenset(decoration))


def copied_text(selection: Selection, plain: str, decoration_rows: frozenset[int]) -> str:
    """The text `selection` covers (as `Selection.extract`), row by row through
    `get_span` so rows keep their screen coordinates, without the decoration rows."""
    if not decoration_rows:
        return selection.extract(plain)
    kept: list[str] = []
    for y, row in enumerate(plain.split("\n")):
        span = selection.get_span(y)
        if span is None or y in decoration_rows:
            continue
        start, end = span
        kept.append(row[start:] if end == -1 else row[start:end])
    return "\n".join(kept)


def highlight(strip: Strip, start: int, end: int, style: Style) -> Strip:
    """`strip` with characters `start`..`end` (-1: to the end) of its stamped text in
    `style`; segments without an offset (padding) are left alone."""
    segments: list[Segment] = []
    for segment in strip:
        meta = segment.style.meta if segment.style is not None else {}
        offset = meta.get("offset") if meta else None
        if offset is None or segment.control:
            segments.append(segment)
            continue
        x0 = offset[0]
        text = segment.text
        stop = len(text) if end == -1 else end - x0
        a, b = max(0, start - x0), min(len(text), stop)
        if a >= b:
            segments.append(segment)
            continue
        base = segment.style
        if a:
            segments.append(Segment(text[:a], base))
        segments.append(Segment(text[a:b], (base or Style()) + style))
        if b < len(text):
            segments.append(Segment(text[b:], base))
    return Strip(segments, strip.cell_length)


class SelectableStatic(Static):
    """A `Static` showing a `SelectableRender`: selectable with the mouse, copyable.

    `show_live` shows a renderable as it is, for content that changes many times a
    second (not selectable until `set_renderable` is called with its final form).
    """

    def __init__(
        self, renderable: RenderableType, *, classes: str | None = None, live: bool = False
    ) -> None:
        selectable = None if live else SelectableRender(renderable)
        self._selectable: SelectableRender | None = selectable
        super().__init__(renderable if selectable is None else selectable, classes=classes)

    def set_renderable(self, renderable: RenderableType) -> None:
        """Show `renderable`, selectable."""
        self._selectable = SelectableRender(renderable)
        self.update(self._selectable)

    def show_live(self, renderable: RenderableType) -> None:
        self._selectable = None
        self.update(renderable)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        if self._selectable is None:
            return None
        return self._selectable.copied_text(selection), "\n"

    def render_line(self, y: int) -> Strip:
        return selected_line(self, super().render_line(y), y)


def selected_line(widget: Widget, strip: Strip, y: int) -> Strip:
    """`strip` (line `y` of `widget`) with the widget's selection painted over it."""
    selection = widget.text_selection
    if selection is None:
        return strip
    span = selection.get_span(y)
    if span is None:
        return strip
    styles = widget.screen.get_component_styles("screen--selection")
    style = TextualStyle.from_styles(styles).rich_style
    return highlight(strip, span[0], span[1], style)
