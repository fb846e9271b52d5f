"""The TUI's `ApprovalHandler`: every `ask` decision becomes a modal confirm dialog.

Parallel tool calls can ask at the same moment; a lock makes them queue, so the user
answers one dialog at a time in the order the calls asked. The dialog is pushed with a
result callback that resolves a future — the same as `push_screen_wait`, but it also
works from the runtime's child tasks, which are not Textual workers, and lets us take the
dialog down again when the turn is interrupted while it is open.

Esc at the dialog denies the call and stops the turn: the denial is returned to the
runtime first (so the call is answered as denied, not as interrupted), then `on_stop`
interrupts the run, which ends before the model is asked again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

if TYPE_CHECKING:  # built before the app's first frame; the first question loads these
    from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest


class ScreenApprover:
    """Answers approval requests by asking the user in a `ConfirmScreen`."""

    def __init__(
        self,
        app: App[Any],
        on_ask: Callable[[ApprovalRequest], None] | None = None,
        on_stop: Callable[[], None] | None = None,
        on_answered: Callable[[], None] | None = None,
    ) -> None:
        self.app = app
        self.on_ask = on_ask
        self.on_stop = on_stop
        self.on_answered = on_answered
        self._lock = asyncio.Lock()
        self.pending = 0

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        self.pending += 1
        try:
            async with self._lock:
                return await self._ask(request)
        finally:
            self.pending -= 1

    async def _ask(self, request: ApprovalRequest) -> ApprovalDecision:
        loop = asyncio.get_running_loop()
        from aistack_tui.agent.ports import ApprovalDecision
        from aistack_tui.tui.screens.confirm import ConfirmAnswer, ConfirmScreen

        answer: asyncio.Future[ConfirmAnswer] = loop.create_future()

        def resolve(result: ConfirmAnswer | None) -> None:
            if not answer.done():
                answer.set_result(result or ConfirmAnswer(ApprovalDecision("reject")))

        screen = ConfirmScreen(request)
        if self.on_ask is not None:
            self.on_ask(request)
        self.app.push_screen(screen, callback=resolve)
        try:
            result = await answer
        except asyncio.CancelledError:
            # The turn was interrupted while the dialog was open: take it down.
            if screen.is_attached and self.app.screen is screen:
                screen.dismiss(None)
            raise
        if self.on_answered is not None:
            self.on_answered()
        if result.stop_turn and self.on_stop is not None:
            # Soon, not now: the denial must reach the runtime before the interrupt does.
            loop.call_soon(self.on_stop)
        return result.decision
