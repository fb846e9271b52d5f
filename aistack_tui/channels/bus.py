"""The message bus between channels and live sessions (seed 002's bus, on the facade).

A channel connects and gets a `ChannelLink`. Through it the channel opens sessions under
keys of its choosing, sends inbound messages (prompts, approval answers, controls) and
reads one ordered stream of outbound messages (agent events, approval requests) for all
of its sessions. Each session has a worker task that runs turns and handles controls
while a turn is running, so an approval answer or a stop is never stuck behind the turn
it concerns.

One channel can hold several sessions; a stored session belongs to one channel at a time
(opening or resuming a session another channel holds is refused with `SessionBusy`).
Nothing here knows what a channel is: editors and chat bots differ only above this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Protocol

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalHandler
from aistack_tui.channels.approver import BusApprover
from aistack_tui.channels.messages import (
    AgentOutput,
    ApprovalAnswer,
    Control,
    ControlResult,
    Inbound,
    MessageQueued,
    OpenRequest,
    Outbound,
    Prompt,
    UserMessage,
)
from aistack_tui.llm.types import Usage
from aistack_tui.session.input import InputSession

if TYPE_CHECKING:
    from aistack_tui.llm.types import Message
    from aistack_tui.permissions.types import PermissionMode
    from aistack_tui.session.live import EditorTerminal, FileReader, FileWriter

log = logging.getLogger(__name__)


class ChannelSession(InputSession, Protocol):
    """What the bus and its channels use of a `LiveSession` (the facade), and no more:
    the channels read what a person typed through the input interpreter too."""

    @property
    def session_id(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def mode(self) -> PermissionMode: ...
    @property
    def running(self) -> bool: ...
    @property
    def messages(self) -> Sequence[Message]: ...
    @property
    def context_window(self) -> int: ...

    def set_mode(self, mode: str) -> PermissionMode: ...
    def take_notices(self) -> list[ev.Notice]: ...
    def run(self, prompt: Prompt) -> AsyncIterator[ev.AgentEvent]: ...
    def follow_up(self, text: str) -> None: ...
    def interrupt(self) -> None: ...
    def take_queued(self) -> list[str]: ...
    def available_models(self) -> list[str]: ...
    async def switch_model(self, model_string: str) -> None: ...
    async def new_conversation(self) -> None: ...
    async def resume(self, session_id: str) -> None: ...
    async def close(self) -> None: ...
    def use_editor_files(self, reader: FileReader | None, writer: FileWriter | None
                         ) -> None: ...
    def use_editor_terminal(self, terminal: EditorTerminal | None) -> None: ...


class SessionOpener(Protocol):
    """Opens a session for a channel (in the program: `bootstrap.open_session`)."""

    async def __call__(self, request: OpenRequest, approver: ApprovalHandler
                       ) -> ChannelSession: ...


class BusError(Exception):
    """A channel asked for something the bus cannot do (the message says what)."""


class SessionBusy(BusError):
    """The stored session is held by another channel."""


class MessageBus:
    """Routes messages between channels and the sessions they hold."""

    def __init__(self, opener: SessionOpener) -> None:
        self._opener = opener
        self._links: dict[str, ChannelLink] = {}
        self._owners: dict[str, str] = {}  # stored session id -> channel name

    def connect(self, channel: str) -> ChannelLink:
        if channel in self._links:
            raise BusError(f"a channel named {channel!r} is already connected")
        link = self._links[channel] = ChannelLink(self, channel)
        return link

    def owner(self, session_id: str) -> str | None:
        """The channel holding a stored session, None when no channel does."""
        return self._owners.get(session_id)

    def _claim(self, session_id: str, channel: str) -> None:
        holder = self._owners.get(session_id)
        if holder is not None and holder != channel:
            raise SessionBusy(f"session {session_id} is held by the {holder} channel")
        self._owners[session_id] = channel

    def _free(self, session_id: str, channel: str) -> None:
        if self._owners.get(session_id) == channel:
            del self._owners[session_id]

    async def _open(self, channel: str, request: OpenRequest, approver: BusApprover
                    ) -> ChannelSession:
        if request.resume is not None:
            self._claim(request.resume, channel)  # refuse before opening anything
        try:
            session = await self._opener(request, approver)
        except BaseException:
            if request.resume is not None:
                self._free(request.resume, channel)
            raise
        try:
            self._claim(session.session_id, channel)
        except SessionBusy:
            await session.close()
            raise
        return session

    async def _disconnect(self, link: ChannelLink) -> None:
        self._links.pop(link.name, None)

    async def close(self) -> None:
        for link in list(self._links.values()):
            await link.close()


class ChannelLink:
    """A channel's end of the bus: its sessions, its inbound sends, its outbound stream."""

    def __init__(self, bus: MessageBus, name: str) -> None:
        self.bus = bus
        self.name = name
        self._outbox: asyncio.Queue[Outbound] = asyncio.Queue()
        self._workers: dict[str, _SessionWorker] = {}

    # --- sessions ------------------------------------------------------------------------

    async def open(self, key: str, request: OpenRequest) -> ChannelSession:
        """Open (or resume) a session under `key`; a key already open is closed first."""
        if key in self._workers:
            await self.release(key)
        approver = BusApprover(key, self._deliver)
        session = await self.bus._open(self.name, request, approver)
        worker = self._workers[key] = _SessionWorker(self, key, session, approver)
        worker.start()
        return session

    def session(self, key: str) -> ChannelSession | None:
        worker = self._workers.get(key)
        return worker.session if worker is not None else None

    def keys(self) -> list[str]:
        return list(self._workers)

    async def release(self, key: str) -> None:
        """Stop the session's turn, close it and let other channels have it."""
        worker = self._workers.pop(key, None)
        if worker is not None:
            await worker.stop()
            self.bus._free(worker.session.session_id, self.name)

    async def close(self) -> None:
        for key in list(self._workers):
            await self.release(key)
        await self.bus._disconnect(self)

    # --- inbound -------------------------------------------------------------------------

    async def send(self, message: Inbound) -> None:
        """Queue a prompt or an approval answer for the session under `message.key`."""
        worker = self._worker(message.key)
        if isinstance(message, Control):
            await self.control(message)
            return
        await worker.inbox.put(message)

    async def control(self, message: Control) -> ControlResult:
        """Carry out a control and wait for the result."""
        worker = self._worker(message.key)
        return await worker.control(message)

    def _worker(self, key: str) -> _SessionWorker:
        worker = self._workers.get(key)
        if worker is None:
            raise BusError(f"no session is open under {key!r}")
        return worker

    # --- outbound ------------------------------------------------------------------------

    async def _deliver(self, message: Outbound) -> None:
        await self._outbox.put(message)

    async def receive(self) -> Outbound:
        return await self._outbox.get()

    async def outbound(self) -> AsyncIterator[Outbound]:
        while True:
            yield await self._outbox.get()


class _SessionWorker:
    """Runs one session's turns; prompts queue, answers and controls act at once."""

    def __init__(self, link: ChannelLink, key: str, session: ChannelSession,
                 approver: BusApprover) -> None:
        self.link = link
        self.key = key
        self.session = session
        self.approver = approver
        self.inbox: asyncio.Queue[UserMessage | ApprovalAnswer] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._turn: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # controls that change the conversation, one at a time
        self._stopping = False
        self._turn_over = False
        """The running turn has delivered its `TurnEnded`: what remains is putting it away."""

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=f"bus-session-{self.key}")

    @property
    def turn_running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    async def _loop(self) -> None:
        while True:
            message = await self.inbox.get()
            if isinstance(message, ApprovalAnswer):
                self.approver.answer(message.request_id, message.decision)
            elif self.turn_running and not self._turn_over:
                text = message.prompt if isinstance(message.prompt, str) else _text(message)
                self.session.follow_up(text)
                await self.link._deliver(MessageQueued(self.key, text))
            else:
                if self._turn is not None:
                    # The turn has ended (its client may have sent the next prompt on
                    # seeing `TurnEnded`) and is only being put away: the prompt is a turn
                    # of its own, its blocks whole, not a follow-up flattened to text.
                    await asyncio.wait({self._turn})
                self._turn = asyncio.create_task(self._run(message.prompt),
                                                 name=f"bus-turn-{self.key}")

    async def _run(self, prompt: Prompt) -> None:
        """One turn, then the messages that arrived while it ran, as the next turn."""
        self._stopping = False
        while True:
            await self._run_once(prompt)
            queued = self.session.take_queued()
            if not queued or self._stopping:  # a stop drops what was queued behind it
                return
            prompt = "\n\n".join(queued)

    async def _run_once(self, prompt: Prompt) -> None:
        ended = self._turn_over = False
        try:
            # What opening the session had to say (a server skipped, a project left
            # untrusted): the agent yields it only at its later steps, so say it first.
            for notice in self.session.take_notices():
                await self.link._deliver(AgentOutput(self.key, notice))
            events = self.session.run(prompt)
            try:
                async for event in events:
                    ended = ended or isinstance(event, ev.TurnEnded)
                    self._turn_over = ended
                    await self.link._deliver(AgentOutput(self.key, event))
            finally:  # close the stream, so its `finally` persists what was said
                aclose = getattr(events, "aclose", None)
                if aclose is not None:
                    await aclose()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the facade converts provider errors; this is a bug guard
            log.exception("turn of %s failed", self.key)
            if not ended:
                await self.link._deliver(AgentOutput(self.key, ev.ErrorOccurred(
                    str(e) or type(e).__name__, type(e).__name__)))
                await self.link._deliver(AgentOutput(self.key, ev.TurnEnded(
                    "error", 0, "", Usage(), None, 0, 0, detail=str(e))))

    async def _stop_turn(self) -> bool:
        if not self.turn_running:
            return False
        self._stopping = True
        self.session.interrupt()
        self.approver.withdraw_all()
        assert self._turn is not None
        with contextlib.suppress(Exception):
            await asyncio.shield(self._turn)
        return True

    async def control(self, message: Control) -> ControlResult:
        action = message.action
        try:
            async with self._lock:
                text = await self._control(message)
        except (ValueError, BusError) as e:
            return ControlResult(self.key, action, False, str(e))
        except Exception as e:  # ConfigError and friends: say it, keep the session
            return ControlResult(self.key, action, False, str(e) or type(e).__name__)
        return ControlResult(self.key, action, True, text)

    async def _control(self, message: Control) -> str:
        session = self.session
        match message.action:
            case "stop":
                return "stopped" if await self._stop_turn() else "nothing is running"
            case "mode":
                return f"mode: {session.set_mode(message.value)}"
            case "model":
                await session.switch_model(message.value)
                return f"model: {session.model}"
            case "new":
                await self._stop_turn()
                old = session.session_id
                await session.new_conversation()
                self._move(old)
                return f"new session {session.session_id}"
            case "resume":
                if self.turn_running:
                    raise BusError("a turn is running: stop it first")
                target = message.value
                holder = self.link.bus.owner(target)
                if holder is not None and holder != self.link.name:
                    raise SessionBusy(f"session {target} is held by the {holder} channel")
                old = session.session_id
                await session.resume(target)
                self._move(old)
                return f"resumed session {session.session_id}"

    def _move(self, old_session_id: str) -> None:
        bus, name = self.link.bus, self.link.name
        bus._free(old_session_id, name)
        bus._claim(self.session.session_id, name)

    async def stop(self) -> None:
        await self._stop_turn()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.session.close()


def _text(message: UserMessage) -> str:
    """The text of a prompt given as blocks (queued messages are text only)."""
    prompt = message.prompt
    if isinstance(prompt, str):
        return prompt
    return "\n".join(getattr(block, "text", "") for block in prompt if hasattr(block, "text"))
