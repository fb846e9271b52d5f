"""Checkpoints of the working tree in a shadow git repository, and undo / rewind."""

from aistack_tui.checkpoints.manager import (
    CheckpointError,
    CheckpointManager,
    TurnRecord,
    UndoResult,
)

__all__ = ["CheckpointError", "CheckpointManager", "TurnRecord", "UndoResult"]
