"""The prompt history every interactive front end shares: `$AISTACK_HOME/prompt_history.jsonl`,
one JSON string per line, oldest first, so a prompt typed in the TUI is recalled in the
line mode and the other way round."""

from __future__ import annotations

import json
from pathlib import Path

HISTORY_FILE = "prompt_history.jsonl"
HISTORY_LIMIT = 500
"""Entries read back: enough to search, small enough to load at once."""


def read_history(path: Path | None) -> list[str]:
    """The last `HISTORY_LIMIT` prompts, oldest first; an unreadable file or line is
    skipped (history is a convenience, never a reason to fail)."""
    if path is None or not path.is_file():
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    items: list[str] = []
    for line in lines[-HISTORY_LIMIT:]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, str) and value.strip():
            items.append(value)
    return items


def append_history(path: Path | None, text: str) -> None:
    """Add one prompt; a read-only home loses the entry, not the prompt."""
    if path is None or not text.strip():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(text) + "\n")
    except OSError:
        pass
