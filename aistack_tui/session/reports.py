"""What the session reports to a person, in words every front end shows the same way:
tokens and cost, an undo or rewind, the turns a rewind can go back to."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aistack_tui.agent.usage import UsageTotals
    from aistack_tui.checkpoints.manager import TurnRecord, UndoResult

SHOWN_FILES = 20


def cost_lines(totals: UsageTotals) -> list[str]:
    """`/cost`: tokens by kind, the cost, and tokens per model."""
    u = totals.usage
    cost = f"${totals.cost_usd:.4f}" if totals.cost_usd is not None else "unknown"
    lines = [
        f"Input {u.input_tokens:,} · output {u.output_tokens:,} · cache read "
        f"{u.cache_read_input_tokens:,} · cache write {u.cache_creation_input_tokens:,} tokens",
        f"Cost: {cost}",
    ]
    for model, usage in totals.by_model.items():
        lines.append(f"  {model}: {usage.input_tokens:,} in / {usage.output_tokens:,} out")
    return lines


def restore_lines(result: UndoResult) -> list[str]:
    """An undo's or rewind's outcome: what happened, then the files restored and removed."""
    lines = [result.message[:1].upper() + result.message[1:]]
    if result.restored:
        lines.append("  restored: " + ", ".join(result.restored[:SHOWN_FILES]))
    if result.removed:
        lines.append("  removed: " + ", ".join(result.removed[:SHOWN_FILES]))
    return lines


def turn_listing(turns: Sequence[TurnRecord]) -> list[str]:
    """`/rewind` without a number: the turns that changed files, numbered oldest first."""
    if not turns:
        return ["No turn of this session has changed files yet."]
    lines = ["Turns that changed files (oldest first):"]
    for number, turn in enumerate(turns, 1):
        when = dt.datetime.fromtimestamp(turn.created_at).strftime("%H:%M:%S")
        lines.append(f"  {number:>2}. {when}  {turn.label}")
    lines.append("/rewind N restores the files and the conversation to before turn N.")
    return lines
