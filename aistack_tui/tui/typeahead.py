"""Keys typed before the first frame, kept for the prompt.

While aistack starts, the terminal already delivers keys (cli/typeahead.py switches it to
the app's input mode at launch), but before the first frame nothing has the focus and the
screen would drop them. The app keeps them here and, once its prompt is on screen, types
them into it; an Enter sends the prompt, queued until the session is ready. First come
the keys typed before the switch, which the CLI read from the terminal as bytes: they are
parsed as the app's input thread parses what it reads (escape sequences and UTF-8
characters whole), and the newline cooked mode made of their Enter is an Enter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual import events

    from aistack_tui.tui.widgets.prompt_input import PromptInput

SUBMIT_KEYS = ("enter", "ctrl+j", "ctrl+m")
"""Enter, and the newline a terminal still in cooked mode made of an Enter."""


class KeysBeforeFirstFrame:
    def __init__(self, typed: bytes = b"") -> None:
        """`typed`: bytes read from the terminal before the app (`cli/typeahead.py`)."""
        self._keys: list[events.Key] | None = keys_of(typed)

    def keep(self, event: events.Event) -> bool:
        """Keep `event` if it is a key read before the first frame."""
        from textual import events

        if self._keys is None or not isinstance(event, events.Key):
            return False
        self._keys.append(event)
        return True

    def replay(self, prompt: PromptInput) -> None:
        """Type the kept keys into the prompt; from now on nothing is kept."""
        keys, self._keys = self._keys or [], None
        for key in keys:
            if key.key in SUBMIT_KEYS:
                prompt.submit()
            elif key.is_printable and key.character is not None:
                prompt.type_text(key.character)


def keys_of(typed: bytes) -> list[events.Key]:
    """The keys in bytes read from a terminal, parsed as Textual's input thread parses them."""
    if not typed:
        return []
    from textual import events
    from textual._xterm_parser import XTermParser

    parser = XTermParser()
    text = typed.decode("utf-8", errors="replace")
    parsed = [*parser.feed(text), *parser.feed("")]  # "": the end, a lone Esc is Esc
    return [message for message in parsed if isinstance(message, events.Key)]
