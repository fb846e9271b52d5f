"""Mouse selection for widgets that show Rich renderables (answers, tool output).

Textual selects text only in widgets whose lines carry an `offset` in their style's
meta (its `Content` adds it; a Rich `Markdown` or `Syntax` does not) and highlights it
only for `Content`. `SelectableRender` wraps any renderable: it renders it once per
width, stamps every segment with its (column, line) in the rendered text and keeps that
text, so `get_selection` copies exactly what is shown (markdown without its markup).
`SelectableStatic` paints the selection over its lines.

The stamping is done once per width and renderable, so it costs nothing per frame; the
live tail of a streaming answer is not wrapped (it changes 30 times a second) and becomes
selectable once frozen.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style as TextualStyle
from textual.widget import Widget
from textual.widgets import Static

_NEW_LINE = Segment.line()


class SelectableRender:
    """A renderable whose rendered lines say where each character is (for selection)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self.plain = ""
        """The text as last rendered, one line per screen line, trailing blanks cut."""
        self._rendered: tuple[tuple[int, int], list[Segment], str] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = (id(console), options.max_width)
        if self._rendered is None or self._rendered[0] != key:
            lines = console.render_lines(self.renderable, options, pad=False, new_lines=False)
            segments, plain = stamp(lines)
            self._rendered = key, segments, plain
        self.plain = self._rendered[2]
        return self._rendered[1]


def stamp(lines: list[list[Segment]]) -> tuple[list[Segment], str]:
    """The lines as one segment list with `offset` meta, and their plain text."""
    out: list[Segment] = []
    texts: list[str] = []
    for y, line in enumerate(lines):
        x = 0
        text: list[str] = []
        for segment in line:
            if segment.control:
                out.append(segment)
                continue
            meta = Style.from_meta({"offset": (x, y)})
            style = segment.style + meta if segment.style is not None else meta
            out.append(Segment(segment.text, style))
            text.append(segment.text)
            x += len(segment.text)
        out.append(_NEW_LINE)
        texts.append("".join(text).rstrip())
    return out, "\n".join(texts)


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
        return selection.extract(self._selectable.plain), "\n"

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
