"""The multi-line prompt: Enter sends, Shift+Enter, Ctrl+J or `\\`+Enter adds a line.

Up/Down on the first/last line walk the history, which is persisted as JSON lines under
`$AISTACK_HOME/prompt_history.jsonl`; a recalled entry is not "typing", so a recalled
`/command` opens no completion menu (which would take the next Up/Down) until it is
edited. A large paste collapses into a chip
(`[Pasted text #1 +42 lines]`) whose full text is restored on send; the chip is one
piece: a deletion that touches it (Backspace right after it) takes the whole chip, and
typing inside it types after it, so no chip is ever half a label with its text gone.
A pasted path to an image file, or Ctrl+V with an image on the clipboard, becomes an image
chip (`[Image #1 shot.png]`) whose image is sent with the prompt (`tui/images.py`); Ctrl+G
edits the prompt in `$VISUAL`/`$EDITOR` (`tui/external_editor.py`).
A draft cleared with Ctrl+C stays recallable with Up for the session. Completion of
`/commands` and `@paths` is driven by the screen, which owns the suggestion list; this
widget only reports what is being typed and accepts a chosen value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import EditResult, Location

from aistack_tui.llm.types import ImageBlock
from aistack_tui.session.history import append_history, read_history
from aistack_tui.tui.external_editor import EditorError, edit_text
from aistack_tui.tui.images import NoImage, PastedImage, clipboard_image, image_path, read_image

PASTE_CHIP_LINES = 12
PASTE_CHIP_CHARS = 1200


class PromptHistory:
    """Prompts sent before, oldest first; appended to the shared history file as sent."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.items: list[str] = read_history(path)

    def add(self, text: str) -> None:
        if not text.strip() or (self.items and self.items[-1] == text):
            return
        self.items.append(text)
        append_history(self.path, text)

    def stash(self, text: str) -> None:
        """Keep a cleared draft recallable with Up in this session (not written out:
        it was never sent)."""
        if text.strip() and (not self.items or self.items[-1] != text):
            self.items.append(text)


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR (what many terminals and Windows programs paste) become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass(slots=True)
class PasteChip:
    label: str
    text: str
    image: ImageBlock | None = None
    """An image chip's image; its text is its label (the model reads where it was)."""


class PromptInput(TextArea):
    """The input box at the bottom of the main screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("shift+enter,ctrl+j", "newline", "New line", show=False),
        Binding("ctrl+g", "open_editor", "Edit in $EDITOR", show=False),
        Binding("ctrl+v", "paste_image", "Paste an image", show=False),
    ]

    class Submitted(Message):
        def __init__(self, text: str, images: tuple[ImageBlock, ...] = ()) -> None:
            super().__init__()
            self.text = text
            self.images = images

    class Problem(Message):
        """Something the user asked for could not be done (no editor, no image)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class CompletionKey(Message):
        """Up, Down, Tab or Escape while the suggestion list is open."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, history: PromptHistory, *, id: str | None = None) -> None:
        super().__init__(
            id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
            compact=True, highlight_cursor_line=False,
            placeholder="Ask anything · / commands · @ files · ! shell · Esc interrupts",
        )
        self.prompt_history = history
        self._history_pos: int | None = None
        self._draft = ""
        self.chips: list[PasteChip] = []
        """Chips pasted since the last send; a chip whose label was deleted stays here
        (unused), so Ctrl+Z bringing the label back brings its text back too."""
        self.completing = False
        """Set by the screen while its suggestion list is showing."""

    # --- keys ---------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        if self.completing and event.key in ("up", "down", "tab", "escape", "enter"):
            event.stop()
            event.prevent_default()
            self.post_message(self.CompletionKey(event.key))
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            if self._backslash_before_cursor():
                # `\` + Enter: a new line, as in Claude Code and Gemini CLI (terminals
                # where Shift+Enter arrives as plain Enter).
                row, col = self.cursor_location
                self.replace("\n", (row, col - 1), (row, col))
                return
            self.submit()
            return
        if event.key == "up" and self.cursor_location[0] == 0 and self.prompt_history.items:
            event.stop()
            event.prevent_default()
            self._walk_history(-1)
            return
        if event.key == "down" and self._history_pos is not None and (
            self.cursor_location[0] == self.document.line_count - 1
        ):
            event.stop()
            event.prevent_default()
            self._walk_history(1)
            return
        await super()._on_key(event)

    def action_newline(self) -> None:
        self.insert("\n")

    def _backslash_before_cursor(self) -> bool:
        if not self.selection.is_empty:
            return False
        row, col = self.cursor_location
        return col > 0 and self.document.get_line(row)[col - 1] == "\\"

    def type_text(self, text: str) -> None:
        """Type `text` at the cursor as if keyed here (for keys a dialog passed on)."""
        self._replace_via_keyboard(text, *self.selection)

    def clear_draft(self) -> None:
        """Ctrl+C on a draft: empty the prompt, keeping the text (chips expanded) for Up."""
        self.prompt_history.stash(self.expanded_text())
        self._history_pos = None
        self._draft = ""
        self.chips = []
        self.load_text("")

    @property
    def showing_history(self) -> bool:
        """The prompt holds a recalled history entry, unedited."""
        pos = self._history_pos
        items = self.prompt_history.items
        return pos is not None and pos < len(items) and self.text == items[pos]

    def fill(self, text: str) -> None:
        """Put `text` (a rewound prompt, an answer's unsent steering) in the prompt with the
        cursor at its end, so typing goes on where the text stops."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def recall(self, text: str) -> None:
        """Put `text` (a history search result) in the prompt, ready to edit or send."""
        items = self.prompt_history.items
        self._draft = self.text if self._history_pos is None else self._draft
        self._history_pos = max(i for i, item in enumerate(items) if item == text) if (
            text in items) else None
        self.load_text(text)
        self.move_cursor(self.document.end)

    def _walk_history(self, step: int) -> None:
        items = self.prompt_history.items
        if self._history_pos is None:
            if step > 0:
                return
            self._draft = self.text
            pos = len(items) - 1
        else:
            pos = self._history_pos + step
        if pos >= len(items):
            self._history_pos = None
            self.load_text(self._draft)
        else:
            self._history_pos = max(0, pos)
            self.load_text(items[self._history_pos])
        self.move_cursor(self.document.end)

    # --- paste chips --------------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        # Handled here entirely: Textual also runs TextArea's own `_on_paste` unless the
        # default is prevented, which would insert the text a second time.
        event.stop()
        event.prevent_default()
        self.paste(event.text)

    def paste(self, text: str) -> None:
        """Insert pasted `text` at the cursor, a large one as a chip."""
        if self.read_only:
            return
        text = normalize_newlines(text)
        path = image_path(text)
        if path is not None:
            try:
                self.add_image(read_image(path))
            except NoImage as e:
                self.post_message(self.Problem(str(e)))
            return
        lines = len(text.splitlines())
        if lines >= PASTE_CHIP_LINES or len(text) >= PASTE_CHIP_CHARS:
            label = f"[Pasted text #{len(self.chips) + 1} +{lines} lines]"
            self.chips.append(PasteChip(label, text))
            text = label
        result = self._replace_via_keyboard(text, *self.selection)
        if result is not None:
            self.move_cursor(result.end_location)

    def add_image(self, image: PastedImage) -> None:
        """Insert an image chip at the cursor."""
        number = sum(chip.image is not None for chip in self.chips) + 1
        label = f"[Image #{number} {image.name}]"
        self.chips.append(PasteChip(label, label, image.block))
        result = self._replace_via_keyboard(label, *self.selection)
        if result is not None:
            self.move_cursor(result.end_location)

    async def action_paste_image(self) -> None:
        """Ctrl+V: the clipboard's image if it holds one, else the app's copied text
        (what TextArea's Ctrl+V pastes; a terminal's own paste arrives as a Paste)."""
        if self.read_only:
            return
        try:
            self.add_image(await clipboard_image())
        except NoImage as e:
            if self.app.clipboard:
                self.paste(self.app.clipboard)
            else:
                self.post_message(self.Problem(str(e)))

    def action_open_editor(self) -> None:
        try:
            edited = edit_text(self.app, self.text)
        except EditorError as e:
            self.post_message(self.Problem(str(e)))
            return
        self.load_text(edited)
        self.move_cursor(self.document.end)
        self.focus()

    def images(self) -> tuple[ImageBlock, ...]:
        """The images of the chips still in the prompt."""
        text = self.text
        return tuple(c.image for c in self.chips if c.image is not None and c.label in text)

    def expanded_text(self) -> str:
        text = self.text
        for chip in self.chips:
            text = text.replace(chip.label, chip.text)
        return text

    def _chip_spans(self) -> list[tuple[int, int]]:
        """Where the chips' labels are, as (start, end) offsets into the text."""
        text = self.text
        spans: list[tuple[int, int]] = []
        for chip in self.chips:
            start = text.find(chip.label)
            if start >= 0:
                spans.append((start, start + len(chip.label)))
        return spans

    def _around_chips(self, start: Location, end: Location) -> tuple[Location, Location]:
        """Widen the range `start`..`end` to whole chips: a deletion or replacement that
        touches a chip takes all of it; an insertion inside one moves after it."""
        text = self.text
        a, b = sorted((_index(text, start), _index(text, end)))
        for first, last in self._chip_spans():
            if a == b and first < a < last:
                a = b = last
            elif a != b and first < b and a < last:
                a, b = min(a, first), max(b, last)
        return _location(text, a), _location(text, b)

    def _delete_via_keyboard(self, start: Location, end: Location) -> EditResult | None:
        return super()._delete_via_keyboard(*self._around_chips(start, end))

    def _replace_via_keyboard(
        self, insert: str, start: Location, end: Location
    ) -> EditResult | None:
        return super()._replace_via_keyboard(insert, *self._around_chips(start, end))

    # --- sending ------------------------------------------------------------------------

    def submit(self) -> None:
        raw = self.text
        text = self.expanded_text()
        if not text.strip():
            return
        images = self.images()
        self.prompt_history.add(raw if not self.chips else text)
        self._history_pos = None
        self._draft = ""
        self.chips = []
        self.load_text("")
        self.post_message(self.Submitted(text, images))

    def text_before_cursor(self) -> str:
        row, col = self.cursor_location
        lines = self.text.split("\n")
        return "\n".join([*lines[:row], lines[row][:col] if row < len(lines) else ""])

    def replace_token(self, token_length: int, value: str) -> None:
        """Replace the `token_length` characters before the cursor with `value`."""
        row, col = self.cursor_location
        start = (row, max(0, col - token_length))
        self.replace(value, start, (row, col))


def _index(text: str, location: Location) -> int:
    row, col = location
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[:row]) + col


def _location(text: str, index: int) -> Location:
    before = text[:index]
    return before.count("\n"), index - (before.rfind("\n") + 1)
