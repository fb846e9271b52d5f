"""The one place the TUI iterates the agent's event stream.

Each run is an exclusive Textual worker that iterates `session.run(prompt)` inside
`contextlib.aclosing`, handing every event to the renderer. Esc asks the session to stop
(`session.interrupt()`: partial text kept, every tool call answered); if the loop has not
ended shortly after, the worker is cancelled and `aclosing` closes the generator so its
`finally` blocks still run. Messages typed while a run is active are steering: delivered
by the agent at its next opportunity, or, if the run ended first, sent as the next prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Protocol

from textual.dom import DOMNode
from textual.worker import Worker, WorkerState

from aistack_tui.agent import events as ev
from aistack_tui.llm import types as lt
from aistack_tui.session.live import LiveSession
from aistack_tui.tui.renderer import EventRenderer

Prompt = str | list[lt.ContentBlock]
INTERRUPT_GRACE_S = 3.0


class RunWatcher(Protocol):
    """Told when a run starts and ends, however it ends (the terminal title, alerts)."""

    def turn_started(self) -> None: ...
    def turn_finished(self, reason: str) -> None: ...


class TurnBridge:
    """Runs agent turns for the app, one at a time."""

    def __init__(
        self,
        host: DOMNode,
        renderer: EventRenderer,
        session: Callable[[], LiveSession],
        on_turn_end: Callable[[ev.TurnEnded], Awaitable[None]] | None = None,
        watcher: RunWatcher | None = None,
    ) -> None:
        self.host = host
        self.renderer = renderer
        self._session = session
        self.on_turn_end = on_turn_end
        self.watcher = watcher
        self.worker: Worker[None] | None = None
        self._leftover: list[str] = []
        self.events_seen = 0
        self._turn_ended = False

    @property
    def running(self) -> bool:
        """The run's worker has not finished: its turn, then the session's bookkeeping
        after it (usage, the end-of-turn callbacks)."""
        return self.worker is not None and self.worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    @property
    def stoppable(self) -> bool:
        """A turn is under way: it has not ended yet, so Esc or Ctrl+C stops it. After
        its end, what the worker still does is bookkeeping nobody asked to see."""
        return self.running and not self._turn_ended

    def start(self, prompt: Prompt) -> Worker[None]:
        self._turn_ended = False
        self.worker = self.host.run_worker(
            self._pump(prompt), name="agent-turn", group="agent", exclusive=True
        )
        return self.worker

    async def _pump(self, prompt: Prompt) -> None:
        session = self._session()
        ended: ev.TurnEnded | None = None
        if self.watcher is not None:
            self.watcher.turn_started()
        try:
            events = session.run(prompt)
            # Closing the generator on Esc runs the runtime's `finally` (it persists).
            closing = (
                contextlib.aclosing(events)
                if isinstance(events, AsyncGenerator)
                else contextlib.nullcontext(events)
            )
            async with closing as stream:
                async for event in stream:
                    self.events_seen += 1
                    if isinstance(event, ev.TurnEnded):
                        # Before it is shown: a key read meanwhile no longer stops it.
                        self._turn_ended = True
                        ended = event
                    await self.renderer.handle(event)
        except asyncio.CancelledError:
            await self.renderer.end_run("interrupted")
            if self.watcher is not None:
                self.watcher.turn_finished("interrupted")
            raise
        except Exception as e:  # a bug below must not take the whole TUI down
            await self.renderer.notice(f"The turn failed: {type(e).__name__}: {e}", "error")
            await self.renderer.end_run("error")
        if self.watcher is not None:
            self.watcher.turn_finished(ended.reason if ended is not None else "error")
        # Steering typed after the agent's last check would otherwise wait in its queue.
        leftover = session.take_queued()
        interrupted = ended is None or ended.reason in ("interrupted", "error")
        if leftover and interrupted:
            self._leftover = leftover
        if ended is not None and self.on_turn_end is not None:
            await self.on_turn_end(ended)
        if leftover and not interrupted:
            # After this worker has finished: starting an exclusive worker from inside
            # it would cancel it.
            self.host.call_later(self.start, "\n\n".join(leftover))

    def steer(self, text: str) -> None:
        """Deliver a message typed while the agent works."""
        self._session().steer(text)

    def interrupt(self) -> bool:
        """Stop the current turn; returns False when none is under way (its end already
        came: the bookkeeping after it is neither stopped nor cut short)."""
        if not self.stoppable:
            return False
        self._session().interrupt()
        worker = self.worker

        def force() -> None:
            if worker is not None and worker.state == WorkerState.RUNNING:
                worker.cancel()

        self.host.set_timer(INTERRUPT_GRACE_S, force)
        return True

    async def stop(self) -> None:
        """Before quitting: a turn under way is stopped at once; after its end, the
        bookkeeping that follows may finish (within the grace an interrupt gets)."""
        if not self.running:
            return
        if not self.interrupt():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wait(), INTERRUPT_GRACE_S)
        if self.worker is not None:
            self.worker.cancel()
        await self.wait()

    def take_leftover(self) -> list[str]:
        items, self._leftover = self._leftover, []
        return items

    async def wait(self) -> None:
        if self.worker is not None:
            with contextlib.suppress(Exception):
                await self.worker.wait()

