"""The conversation as data: one small mutable record per visible item.

The conversation widget keeps every entry but mounts widgets for only a window of the
most recent ones, so a 2,000-message session costs the same layout work as a new one.
A widget reads its entry; an entry can be re-mounted later (scrolling back) and looks
exactly as it did, because all its state lives here and not in the widget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from aistack_tui.tools.diffs import FileDiff

ToolState: TypeAlias = Literal["pending", "asking", "running", "done", "failed", "denied"]


@dataclass(slots=True)
class UserEntry:
    text: str
    queued: bool = False
    """A steering message typed while the agent worked, not delivered yet."""


@dataclass(slots=True)
class AssistantEntry:
    text: str = ""
    finished: bool = False
    interrupted: bool = False


@dataclass(slots=True)
class ThinkingEntry:
    text: str = ""


@dataclass(slots=True)
class ToolEntry:
    tool_use_id: str
    name: str
    summary: str
    state: ToolState = "pending"
    detail: str = ""
    diff: FileDiff | None = None
    language: str = ""
    duration_s: float | None = None
    note: str = ""
    """Why it failed or was denied, shown after the summary."""
    expanded: bool = False
    full: bool = False
    """Expanded with every line of the output, not only the first ones."""
    started_at: float | None = None
    """When it started running (`time.monotonic`), for the elapsed time while it runs."""
    live_output: str = ""
    """The end of what a running command has printed so far (cleared once it is done)."""
    children: list[ToolEntry] = field(default_factory=list["ToolEntry"])
    """A `Task` call's subagent tool calls, one row each, in the order they were made."""
    child_end: str = ""
    """How the subagent ended (`completed in 3 turns`), once it has."""
    auto_open: bool = True
    """Show the child rows while the subagent works, until the user toggles the card."""


@dataclass(slots=True)
class NoticeEntry:
    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(slots=True)
class ShellEntry:
    """A `!command` the user ran themselves, with its output."""

    command: str
    output: str
    exit_code: int
    full: bool = False
    """All of the output shown, not only its first lines."""


Entry: TypeAlias = (
    UserEntry | AssistantEntry | ThinkingEntry | ToolEntry | NoticeEntry | ShellEntry
)


@dataclass(slots=True)
class Transcript:
    """All entries of the session in order; `by_tool_id` finds a tool card to update."""

    entries: list[Entry] = field(default_factory=list)
    by_tool_id: dict[str, ToolEntry] = field(default_factory=dict)

    def add(self, entry: Entry) -> Entry:
        self.entries.append(entry)
        if isinstance(entry, ToolEntry):
            self.by_tool_id[entry.tool_use_id] = entry
        return entry

    def last_answer(self) -> str:
        for entry in reversed(self.entries):
            if isinstance(entry, AssistantEntry) and entry.text.strip():
                return entry.text
        return ""
