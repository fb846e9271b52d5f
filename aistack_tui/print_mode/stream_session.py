"""`aistack -p --input-format stream-json`: one session that a client program drives.

The protocol is Claude Code's headless one, so programs written for it (the Claude Agent
SDK's `query()` and `ClaudeSDKClient`) drive aistack unchanged: each user message on
stdin is one turn, answered with a `system/init` line, the `assistant` / `user` messages
(and `stream_event` lines with `--include-partial-messages`) and a `result` line; the
session stays open between turns until stdin ends. Control requests are answered while a
turn runs, so `interrupt` stops it; with `--permission-prompt-tool stdio` every permission
prompt becomes a `can_use_tool` request to the client.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalHandler, DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.llm.types import Usage
from aistack_tui.print_mode.control import ControlChannel, ControlHandler
from aistack_tui.print_mode.formatters import (
    RunInfo,
    StreamJsonFormatter,
    init_object,
    message_envelope,
    result_object,
)
from aistack_tui.print_mode.permission_prompt import ControlApprover
from aistack_tui.print_mode.runner import Refused, prompt_for_turn, report, settle_start
from aistack_tui.print_mode.session_controls import LiveSessionExtras, mcp_relay
from aistack_tui.print_mode.stream_input import (
    ControlReply,
    ControlRequest,
    InputError,
    StdinLines,
    UserTurn,
    parse_line,
)
from aistack_tui.shutdown.signals import StopSignals
from aistack_tui.shutdown.status import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    signal_status,
)
from aistack_tui.shutdown.streams import is_closed_stream, say, silence

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig
    from aistack_tui.session.live import LiveSession


# The Claude Code release whose headless protocol this implements: the Agent SDK reads
# it from the init line and warns about a CLI too old to say (see docs/print-mode.md).
PROTOCOL_VERSION = "2.0.0"


@dataclass(frozen=True, slots=True)
class StreamOptions:
    include_partial: bool = False
    """`--include-partial-messages`: `stream_event` lines as the answer streams."""
    prompt_via_control: bool = False
    """`--permission-prompt-tool stdio`: ask the client instead of denying."""
    replay_user: bool = False
    """`--replay-user-messages`: echo each prompt, with its `uuid` (the message id a
    `rewind_files` request names)."""


class JsonLines:
    """Writes one JSON object a line and flushes, so a client sees each as it happens.

    Everything is written from the event loop's thread, so lines never interleave. A
    client that closed its end is gone: `on_broken` is called once and nothing more is
    written.
    """

    def __init__(self, out: TextIO, on_broken: Callable[[], None] | None = None) -> None:
        self.out = out
        self.broken = False
        self.on_broken = on_broken

    def emit(self, obj: dict[str, Any]) -> None:
        if self.broken:
            return
        try:
            self.out.write(json.dumps(obj) + "\n")
            self.out.flush()
        except (OSError, ValueError) as e:
            if not is_closed_stream(e):
                raise
            self.broken = True
            silence(self.out)
            if self.on_broken is not None:
                self.on_broken()


class _Ending:
    """Why the session ends before stdin does (a signal, a client gone), and how: the
    running turn is interrupted (what completed is kept) and no further turn starts."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.session: LiveSession | None = None
        self.turns: asyncio.Queue[UserTurn | None] | None = None
        """Set once turns are taken; before that, ending cancels what is under way."""
        self.closing = False
        self.main = asyncio.current_task()

    def end(self, status: int) -> None:
        if self.status is not None:
            return
        self.status = status
        if self.closing:
            return  # already on the way out; cancelling would leave things unclosed
        if self.turns is None:
            if self.main is not None:
                self.main.cancel()  # opening, or waiting for MCP servers: nothing to keep
            return
        if self.session is not None and self.session.running:
            self.session.interrupt()
        self.turns.put_nowait(None)

    def stopped_by_us(self) -> bool:
        """Whether a CancelledError is ours (then it is taken back) or the caller's."""
        if self.status is None or self.main is None:
            return False
        self.main.uncancel()
        return True


class _TurnFormatter(StreamJsonFormatter):
    """stream-json through the shared writer (a closed stdout ends quietly)."""

    def __init__(self, lines: JsonLines, partial: bool, replay_user: bool = False) -> None:
        super().__init__(lines.out, partial)
        self.lines = lines
        self.replay_user = replay_user

    def _emit(self, obj: dict[str, Any]) -> None:
        self.lines.emit(obj)

    def event(self, event: ev.AgentEvent) -> None:
        if self.replay_user and isinstance(event, ev.MessageAdded):
            message = event.message
            if message.role == "user" and not message.tool_results():
                self._emit({**message_envelope(message, self.session_id), "uuid": message.id})
        super().event(event)


async def run_stream_session(
    config: RunConfig,
    options: StreamOptions,
    *,
    stdin: BinaryIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Serve the session until stdin ends; returns the process exit code.

    SIGINT and SIGTERM end it early with 128 + the signal, a client that closed stdout
    with 141 (shutdown/status.py); the session is closed on every path.
    """
    ending = _Ending()
    lines = JsonLines(out or sys.stdout, on_broken=lambda: ending.end(EXIT_BROKEN_PIPE))
    errors = err or sys.stderr
    channel = ControlChannel(lines.emit)
    holder: list[LiveSession] = []

    def interrupt() -> None:
        if holder and holder[0].running:
            holder[0].interrupt()

    def set_mode(mode: str) -> None:
        try:
            holder[0].set_mode(mode)
        except ValueError as e:
            errors.write(f"aistack: {e}\n")

    approver: ApprovalHandler = (
        ControlApprover(channel, on_interrupt=interrupt, on_mode=set_mode)
        if options.prompt_via_control
        else DenyAll()
    )
    # The client's in-process MCP servers (`"type": "sdk"`) are reached through it.
    config = dataclasses.replace(config, mcp_relay=mcp_relay(channel))
    with StopSignals(lambda signum: ending.end(signal_status(signum))) as signals:
        try:
            session = await open_session(config, approver)
        except asyncio.CancelledError:
            if not ending.stopped_by_us():
                raise
            return _ended(ending.status or EXIT_INTERRUPTED, signals, errors)
        holder.append(session)
        ending.session = session
        code = EXIT_OK
        try:
            code = await _serve(session, config, options, lines, channel, stdin, errors,
                                ending)
        except asyncio.CancelledError:
            if not ending.stopped_by_us():
                raise
        except (OSError, ValueError) as e:  # stderr gone under a diagnostic
            if not is_closed_stream(e):
                raise
            silence(sys.stderr)
            code = EXIT_BROKEN_PIPE
        finally:
            ending.closing = True
            await session.close()
    return code if ending.status is None else _ended(ending.status, signals, errors)


def _ended(status: int, signals: StopSignals, err: TextIO) -> int:
    if signals.received is not None:
        say(err, signals.notice())
    return status


async def _serve(
    session: LiveSession,
    config: RunConfig,
    options: StreamOptions,
    lines: JsonLines,
    channel: ControlChannel,
    stdin: BinaryIO | None,
    err: TextIO,
    ending: _Ending,
) -> int:
    from aistack_tui.session.providers import guess_provider

    handler = ControlHandler(
        session, channel, resolve_model=lambda m: m if "/" in m else guess_provider(m),
        extras=LiveSessionExtras(session, channel),
    )
    turns: asyncio.Queue[UserTurn | None] = asyncio.Queue()
    ending.turns = turns
    answering: set[asyncio.Task[None]] = set()
    bad_input: list[InputError] = []
    source = StdinLines(stdin or sys.stdin.buffer)

    async def read() -> None:
        while (raw := await source.next()) is not None:
            try:
                item = parse_line(raw)
            except InputError as e:
                bad_input.append(e)
                err.write(f"aistack: {e}\n")
                if session.running:
                    session.interrupt()
                break
            match item:
                case UserTurn():
                    turns.put_nowait(item)
                case ControlRequest():
                    task = asyncio.create_task(handler.handle(item))
                    answering.add(task)
                    task.add_done_callback(answering.discard)
                case ControlReply():
                    if not channel.resolve(item) and config.verbose:
                        err.write(f"aistack: no request {item.request_id} is waiting\n")
                case _:
                    pass
        # Nobody is left to answer a permission prompt: the waiting ones are denied.
        channel.close("stdin closed")
        turns.put_nowait(None)

    reader = asyncio.create_task(read())
    code = EXIT_OK
    try:
        # Stdin is read from here on: SDK MCP servers connect through the client while
        # start-up waits for them, and `initialize` is answered meanwhile.
        await settle_start(session, config, err)
        while (turn := await turns.get()) is not None and not bad_input:
            code = await _run_turn(session, config, options, lines, err, turn)
            if ending.status is not None:
                break
    finally:
        reader.cancel()
        for task in list(answering):
            await asyncio.gather(task, return_exceptions=True)
    return EXIT_USAGE if bad_input else code


async def _run_turn(
    session: LiveSession,
    config: RunConfig,
    options: StreamOptions,
    lines: JsonLines,
    err: TextIO,
    turn: UserTurn,
) -> int:
    formatter = _TurnFormatter(lines, options.include_partial, options.replay_user)
    info = RunInfo(
        session_id=session.session_id,
        cwd=str(session.cwd),
        model=session.model,
        tools=session.tool_names(),
        permission_mode=session.mode,
        mcp_servers=[{"name": s.name, "status": s.status} for s in session.mcp_statuses()],
    )
    formatter.session_id = info.session_id
    lines.emit({**init_object(info), "claude_code_version": PROTOCOL_VERSION})
    content = await prompt_for_turn(session, turn.content)
    if isinstance(content, Refused):  # the client still gets its result line
        err.write(f"aistack: {content.message}\n")
        refused = ev.TurnEnded("error", 0, "", Usage(), None, 0, 0, detail=content.message)
        lines.emit(result_object(refused, session_id=session.session_id, denials=[],
                                 error=content.message))
        return EXIT_FAILED
    denied_before = len(session.denials)
    error: str | None = None
    end: ev.TurnEnded | None = None
    async for event in session.run(content):
        formatter.event(event)
        report(event, config, err)
        if isinstance(event, ev.ErrorOccurred):
            error = event.message
        elif isinstance(event, ev.TurnEnded):
            end = event
    assert end is not None  # run() always ends with TurnEnded
    denials = session.denials[denied_before:]
    lines.emit(result_object(end, session_id=session.session_id, denials=denials, error=error))
    if end.reason == "completed":
        return EXIT_OK
    if end.reason == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_FAILED
