"""A modal dialog that takes only deliberate keys (see `tui/typing_guard.py`).

Every dialog that can open while the user types derives from `GuardedModal`: the confirm
dialog of a tool call, the trust question, the yes/no questions of `/undo`, `/rewind` and
`/init`. Until a key is deliberate, letters and Backspace (and pastes) go on into the
prompt of the app behind the dialog, and other keys are dropped, so neither answers; a
deliberate letter the dialog has no binding for goes on into the prompt as well. A
text field inside the dialog (the "tell the model" box) is the user's own choice and is
never guarded.
"""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.screen import ModalScreen
from textual.widgets import Input, TextArea

from aistack_tui.tui.typing_guard import TypeAheadHost, TypingGuard, is_typing

ResultT = TypeVar("ResultT")


class GuardedModal(ModalScreen[ResultT]):
    """A modal screen whose key bindings fire only for deliberate keys."""

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._shown_at: float | None = None
        self._own_guard: TypingGuard | None = None

    @property
    def typing_guard(self) -> TypingGuard:
        """The app's guard (it knows when the user last typed); a bare host gets one of
        its own, so the grace period holds anywhere."""
        app = self.app
        if isinstance(app, TypeAheadHost):
            return app.typing_guard
        if self._own_guard is None:
            self._own_guard = TypingGuard()
        return self._own_guard

    def on_screen_resume(self) -> None:
        # On screen (again): the grace period starts now, also after a screen on top
        # of this one closed.
        self._shown_at = self.typing_guard.clock()

    def on_screen_suspend(self) -> None:
        self._shown_at = None

    def on_key(self, event: events.Key) -> None:
        if isinstance(self.focused, Input | TextArea):
            return
        if self.typing_guard.deliberate(self._shown_at) and (
            not is_typing(event) or self._answers(event.key)
        ):
            return
        # Bindings are checked once the key has bubbled up to the app: stopping it here
        # keeps it from answering. A deliberate letter the dialog has no binding for
        # goes on too: it starts the user's next words, it is not lost.
        event.stop()
        event.prevent_default()
        app = self.app
        if is_typing(event) and isinstance(app, TypeAheadHost):
            app.type_ahead(event)

    def _answers(self, key: str) -> bool:
        """Whether this dialog, or the widget focused in it, has a binding for `key`."""
        holders = [self, self.focused] if self.focused is not None else [self]
        return any(key in holder._bindings.key_to_bindings for holder in holders)

    def on_paste(self, event: events.Paste) -> None:
        if isinstance(self.focused, Input | TextArea):
            return
        # A dialog has no use for pasted text: it belongs in the prompt.
        event.stop()
        event.prevent_default()
        app = self.app
        if isinstance(app, TypeAheadHost):
            app.type_ahead(event)
