"""Tab completion for the line mode's prompt: `/commands` and `@path` mentions.

The candidates come from the same sources the TUI completes from (the project's files
through a `.gitignore`-aware index, matched fuzzily; the command table's names and help),
so the two front ends suggest the same things; this module only adapts them to
prompt_toolkit's `Completer`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from aistack_tui.session.mentions import FileIndex, command_at_start, mention_at_end

CommandList = Callable[[], Sequence[tuple[str, str]]]
"""(name, help) of each slash command, read when completing (commands can be added)."""


class LineCompleter(Completer):
    """`/name` at the start of the prompt; `@path` after a space or at the start."""

    def __init__(self, commands: CommandList, files: FileIndex | None, limit: int = 12) -> None:
        self.commands = commands
        self.files = files
        self.limit = limit

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        partial = command_at_start(before)
        if partial is not None:
            yield from self._commands(partial)
            return
        mention = mention_at_end(before)
        if mention is not None and self.files is not None:
            for path in self.files.matches(mention, self.limit):
                yield Completion(
                    path,
                    start_position=-len(mention),
                    display=path,
                    display_meta="directory" if path.endswith("/") else "",
                )

    def _commands(self, partial: str) -> Iterable[Completion]:
        commands = list(self.commands())
        starts = [c for c in commands if c[0].startswith(partial)]
        inside = [c for c in commands if partial in c[0] and c not in starts]
        for name, help_text in starts + inside:
            yield Completion(
                "/" + name, start_position=-len(partial) - 1, display="/" + name,
                display_meta=help_text,
            )
