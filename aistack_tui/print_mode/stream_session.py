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
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalHandler, DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.print_mode.control import ControlChannel, ControlHandler
from aistack_tui.print_mode.formatters import (
    RunInfo,
    StreamJsonFormatter,
    init_object,
    result_object,
)
from aistack_tui.print_mode.permission_prompt import ControlApprover
from aistack_tui.print_mode.runner import report, settle_start
from aistack_tui.print_mode.stream_input import (
    ControlReply,
    ControlRequest,
    InputError,
    StdinLines,
    UserTurn,
    parse_line,
)

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig
    from aistack_tui.session.live import LiveSession

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# The Claude Code release whose headless protocol this implements: the Agent SDK reads
# it from the init line and warns about a CLI too old to say (see docs/print-mode.md).
PROTOCOL_VERSION = "2.0.0"


@dataclass(frozen=True, slots=True)
class StreamOptions:
    include_partial: bool = False
    """`--include-partial-messages`: `stream_event` lines as the answer streams."""
    prompt_via_control: bool = False
    """`--permission-prompt-tool stdio`: ask the client instead of denying."""


class JsonLines:
    """Writes one JSON object a line and flushes, so a client sees each as it happens.

    Everything is written from the event loop's thread, so lines never interleave.
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.broken = False

    def emit(self, obj: dict[str, Any]) -> None:
        if self.broken:
            return
        try:
            self.out.write(json.dumps(obj) + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):
            self.broken = True  # the client is gone; the session ends with stdin


class _TurnFormatter(StreamJsonFormatter):
    """stream-json through the shared writer (a closed stdout ends quietly)."""

    def __init__(self, lines: JsonLines, partial: bool) -> None:
        super().__init__(lines.out, partial)
        self.lines = lines

    def _emit(self, obj: dict[str, Any]) -> None:
        self.lines.emit(obj)


async def run_stream_session(
    config: RunConfig,
    options: StreamOptions,
    *,
    stdin: BinaryIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Serve the session until stdin ends; returns the process exit code."""
    lines = JsonLines(out or sys.stdout)
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
    session = await open_session(config, approver)
    holder.append(session)
    try:
        return await _serve(session, config, options, lines, channel, stdin, errors)
    finally:
        await session.close()


async def _serve(
    session: LiveSession,
    config: RunConfig,
    options: StreamOptions,
    lines: JsonLines,
    channel: ControlChannel,
    stdin: BinaryIO | None,
    err: TextIO,
) -> int:
    from aistack_tui.session.providers import guess_provider

    await settle_start(session, config, err)

    handler = ControlHandler(
        session, channel, resolve_model=lambda m: m if "/" in m else guess_provider(m)
    )
    turns: asyncio.Queue[UserTurn | None] = asyncio.Queue()
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
        while (turn := await turns.get()) is not None and not bad_input:
            code = await _run_turn(session, config, options, lines, err, turn)
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
    formatter = _TurnFormatter(lines, options.include_partial)
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
    denied_before = len(session.denials)
    error: str | None = None
    end: ev.TurnEnded | None = None
    async for event in session.run(turn.content):
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
