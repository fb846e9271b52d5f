"""The line mode's input line: prompt_toolkit with history, completion and multi-line.

- Enter sends. A line ending in a backslash continues on the next line instead (it works
  on every terminal, including Emacs' shell buffer which sends whole lines); Esc then
  Enter (what most terminals send for Alt+Enter) inserts a newline anywhere.
- Up/Down walk the history, which is the TUI's: one JSON string per line in
  `$AISTACK_HOME/prompt_history.jsonl`, so a prompt typed in either front end is found
  in the other. Ctrl+R searches it.
- Tab (or typing) completes `/commands` at the start and `@paths` anywhere.
- Shift+Tab cycles the permission mode, shown in the prompt when it is not `default`.
- Ctrl+C clears the line; on an empty line it raises KeyboardInterrupt (the REPL quits on
  the second in a row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application.current import get_app
from prompt_toolkit.completion import Completer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import History
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from aistack_tui.linemode.terminal import LineIO
from aistack_tui.session.history import append_history, read_history


class JsonLinesHistory(History):
    """Prompt history in the TUI's format: a JSON string per line, oldest first."""

    def __init__(self, path: Path | None) -> None:
        super().__init__()
        self.path = path

    def load_history_strings(self) -> Iterable[str]:
        return list(reversed(read_history(self.path)))  # prompt_toolkit wants newest first

    def store_string(self, string: str) -> None:
        append_history(self.path, string)

    def append_string(self, string: str) -> None:
        # Skip a repeat of the last entry, as the TUI does.
        recent = self.get_strings()
        if recent and recent[-1] == string:
            return
        super().append_string(string)


def prompt_bindings(on_cycle_mode: Callable[[], None] | None = None) -> KeyBindings:
    """Newline keys (trailing backslash, Esc+Enter), Ctrl+C and Shift+Tab for the mode."""
    kb = KeyBindings()

    @kb.add("c-c")
    def _ctrl_c(event: KeyPressEvent) -> None:
        # A line with text is cleared; on an empty line Ctrl+C leaves the prompt with
        # KeyboardInterrupt, which the REPL counts towards quitting.
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    @Condition
    def ends_in_backslash() -> bool:
        doc = get_app().current_buffer.document
        return doc.is_cursor_at_the_end and doc.text.endswith("\\")

    @kb.add("enter", filter=ends_in_backslash, eager=True)
    def _continue(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        buffer.delete_before_cursor(1)
        buffer.insert_text("\n")

    @kb.add("escape", "enter", eager=True)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    if on_cycle_mode is not None:
        cycle = on_cycle_mode

        @kb.add("s-tab")
        def _mode(event: KeyPressEvent) -> None:
            cycle()
            event.app.invalidate()

    return kb


def make_prompt_session(
    io: LineIO,
    *,
    history: History,
    completer: Completer | None,
    mode: Callable[[], str],
    on_cycle_mode: Callable[[], None] | None = None,
) -> PromptSession[str]:
    """The REPL's prompt; `mode()` is read at every redraw to show the permission mode."""

    def message() -> FormattedText:
        current = mode()
        parts: list[tuple[str, str]] = []
        if current != "default":
            parts.append(("ansiyellow bold", f"{current} "))
        parts.append(("ansicyan bold", "> "))
        return FormattedText(parts)

    return PromptSession(
        message,
        history=history,
        completer=completer,
        complete_while_typing=True,
        key_bindings=prompt_bindings(on_cycle_mode),
        prompt_continuation=lambda width, line_number, is_soft_wrap: "." * (width - 1) + " ",
        enable_history_search=False,
        input=io.input,
        output=io.output,
    )
