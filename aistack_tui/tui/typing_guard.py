"""Which keys at a dialog were meant for it, and which for the prompt the user was typing in.

A dialog (a tool approval, the trust question, an overwrite question) can open while the
user is typing a message for the model. Its keys are letters: without a guard the `y` of
"style" approves an edit and the `n` of "consistent" denies the next one. So a dialog
takes a key only when it is *deliberate*: the dialog has been on screen for
`DIALOG_GRACE_S` (nobody reads a dialog and decides faster) and the key does not continue
a typing burst (the previous key came at least `TYPING_BURST_S` before). Every other key
goes on into the prompt, where the user meant it, so typed-ahead text stays whole.

The clock is injected, so tests drive time instead of sleeping.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from textual import events

DIALOG_GRACE_S = 0.8
"""How long after a dialog appears its keys still go to the prompt."""
TYPING_BURST_S = 0.5
"""A key this soon after the one before continues what the user was typing."""

Clock = Callable[[], float]


class TypingGuard:
    """Remembers when the user last pressed a key and judges keys at dialogs."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.last_key_at = -math.inf

    def key_pressed(self) -> None:
        """A key went to the main screen (the prompt): typing is going on."""
        self.last_key_at = self.clock()

    def deliberate(self, shown_at: float | None) -> bool:
        """Is a key pressed now, at a dialog shown at `shown_at`, meant for the dialog?

        Records the key either way, so a burst that started in the prompt and goes on
        at the dialog stays a burst to its last letter."""
        now = self.clock()
        previous, self.last_key_at = self.last_key_at, now
        if shown_at is None:  # not on screen yet
            return False
        return now - shown_at >= DIALOG_GRACE_S and now - previous >= TYPING_BURST_S


@runtime_checkable
class TypeAheadHost(Protocol):
    """An app with a prompt that takes the keys and pastes a dialog did not take."""

    @property
    def typing_guard(self) -> TypingGuard: ...

    def type_ahead(self, event: events.Key | events.Paste) -> None: ...


def is_typing(event: events.Key) -> bool:
    """Keys that edit text (letters, digits, space, Backspace): those carry on into the
    prompt. Others (Enter, Esc, arrows) are dropped while the dialog is guarded."""
    return event.is_printable or event.key == "backspace"
