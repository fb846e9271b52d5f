"""Cut tool results over 30 KB, keeping the full text where the model can page through it.

The model gets the head of the output and the path of a file holding all of it, and is
told to Read that file with offset/limit. The permission engine treats the results
folder as always readable, so paging never asks.
"""

from __future__ import annotations

import re
from pathlib import Path

MAX_RESULT_BYTES = 30_000
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def page_result(text: str, *, results_dir: Path, tool_use_id: str) -> str:
    """Return `text` unchanged when small, else its head plus how to read the rest."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= MAX_RESULT_BYTES:
        return text
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{_SAFE_ID.sub('_', tool_use_id) or 'result'}.txt"
    path.write_text(text, encoding="utf-8", errors="replace")
    head = data[:MAX_RESULT_BYTES].decode("utf-8", errors="ignore")
    cut_at = head.rfind("\n")
    if cut_at > MAX_RESULT_BYTES // 2:
        head = head[:cut_at]
    shown_lines = head.count("\n") + 1
    total_lines = text.count("\n") + 1
    return (
        f"{head}\n\n[Output truncated: showing {len(head.encode())} of {len(data)} bytes "
        f"(lines 1-{shown_lines} of {total_lines}). The full output is saved at {path}. "
        f"To see more, call Read with file_path={str(path)!r}, offset={shown_lines + 1} "
        "and a limit.]"
    )
