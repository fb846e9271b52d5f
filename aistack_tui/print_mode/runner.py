"""Print mode: one non-interactive run for pipes, scripts and CI.

Nobody can answer a permission prompt here, so every `ask` is denied, the model is told
why, and the call is listed in `permission_denials`. Nobody can answer the trust question
either: what an untrusted project's files ask for (MCP servers, hooks, allow rules...) is
left out unless `--trust-project` is given, and one stderr line says so. Diagnostics go
to stderr; stdout carries only the chosen output format.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO, assert_never

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalHandler, DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.llm.types import ContentBlock, TextBlock
from aistack_tui.print_mode.formatters import (
    Formatter,
    OutputFormat,
    RunInfo,
    make_formatter,
    result_object,
)
from aistack_tui.session.config import RunConfig
from aistack_tui.session.input import (
    CommandFailed,
    InputInterpreter,
    NoInput,
    RunBuiltin,
    RunShell,
    SendPrompt,
    UnknownCommand,
    did_you_mean,
    unavailable_message,
)
from aistack_tui.shutdown.signals import StopSignals
from aistack_tui.shutdown.status import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
)
from aistack_tui.shutdown.streams import is_closed_stream, say, silence

if TYPE_CHECKING:
    from aistack_tui.session.live import LiveSession
    from aistack_tui.settings.trust import TrustItem


def resume_gc_after_startup() -> None:
    """Turn the cyclic GC back on if `cli.main` paused it for start-up.

    What start-up built is frozen first: it lives for the whole run, so later collections
    need not walk it again (`gc.freeze`).
    """
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def untrusted_notice(items: list[TrustItem]) -> str:
    """The one stderr line saying what of the project's files this run left out."""
    from aistack_tui.trust_gate import untrusted_notice as notice

    return notice(items)


async def run_print(
    config: RunConfig,
    prompt: str,
    output_format: OutputFormat = "text",
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    partial: bool = False,
    approver: ApprovalHandler | None = None,
) -> int:
    """Run `prompt` to completion; returns the process exit code (docs/print-mode.md).

    `partial` (`--include-partial-messages`): stream-json also carries stream_event lines.
    `approver` answers the calls that ask (`--permission-prompt tty`: a person at the
    terminal); by default nobody is there and they are denied.
    """
    formatter = make_formatter(output_format, out or sys.stdout, partial=partial)
    return await _run(config, prompt, formatter, err or sys.stderr, approver or DenyAll())


async def _run(
    config: RunConfig, prompt: str, formatter: Formatter, err: TextIO, approver: ApprovalHandler
) -> int:
    """Open the session, run the prompt, close the session on every path.

    SIGINT and SIGTERM stop the turn (what completed is kept, the result says
    `error_during_execution`) and the status is 128 + the signal; a reader that went
    away ends the run quietly with 141 (shutdown/status.py).
    """
    main = asyncio.current_task()
    opened: list[LiveSession] = []
    closing = False

    def stop(_signum: int) -> None:
        if closing:
            return  # already on the way out; cancelling would leave things unclosed
        if opened and opened[0].running:
            opened[0].interrupt()
        elif main is not None:
            main.cancel()  # starting up or between steps: nothing to keep but the session

    with StopSignals(stop) as signals:
        try:
            session = await open_session(config, approver)
        except asyncio.CancelledError:
            if signals.received is None or main is None:
                raise
            main.uncancel()
            return _stopped(signals, err)
        opened.append(session)
        try:
            status = await _run_open(session, config, prompt, formatter, err)
        except asyncio.CancelledError:
            if signals.received is None or main is None:
                raise
            main.uncancel()
            status = EXIT_INTERRUPTED
        except (OSError, ValueError) as e:
            if not is_closed_stream(e):
                raise
            silence(sys.stdout, sys.stderr)
            status = EXIT_BROKEN_PIPE
        finally:
            closing = True
            await session.close()
        return _stopped(signals, err) if signals.received is not None else status


def _stopped(signals: StopSignals, err: TextIO) -> int:
    say(err, signals.notice())
    return signals.status or EXIT_INTERRUPTED


async def _run_open(
    session: LiveSession, config: RunConfig, prompt: str, formatter: Formatter, err: TextIO
) -> int:
    await settle_start(session, config, err)
    # The prompt is read as every front end reads typed text (`session/input.py`):
    # `aistack -p "/review src/x.py"` runs a custom command, `/mcp__server__prompt args`
    # an MCP server's prompt, and the files and resources a prompt @-mentions go with it.
    turn_prompt = await prompt_for_turn(session, prompt)
    if isinstance(turn_prompt, Refused):
        err.write(f"aistack: {turn_prompt.message}\n")
        return turn_prompt.status
    error: str | None = None
    end: ev.TurnEnded | None = None
    formatter.start(
        RunInfo(
            session_id=session.session_id,
            cwd=str(config.cwd),
            model=session.model,
            tools=session.tool_names(),
            permission_mode=session.mode,
            mcp_servers=[{"name": s.name, "status": s.status} for s in session.mcp_statuses()],
        )
    )
    # Closed on every way out (a reader gone mid-stream too), so the agent's `finally`
    # keeps what was said so far.
    async with contextlib.aclosing(session.run(turn_prompt)) as events:
        async for event in events:
            formatter.event(event)
            report(event, config, err)
            if isinstance(event, ev.ErrorOccurred):
                error = event.message
            elif isinstance(event, ev.TurnEnded):
                end = event
    assert end is not None  # run() always ends with TurnEnded
    result = result_object(
        end, session_id=session.session_id, denials=session.denials, error=error
    )
    formatter.finish(result)
    if end.reason == "max_turns":
        err.write(f"aistack: stopped after --max-turns {end.num_turns}\n")

    if end.reason == "completed":
        return EXIT_OK
    if end.reason == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_FAILED


@dataclass(frozen=True, slots=True)
class Refused:
    """A prompt print mode does not send: why (for stderr), and the exit status."""

    message: str
    status: int


async def prompt_for_turn(session: LiveSession, prompt: str | list[ContentBlock]
                          ) -> list[ContentBlock] | Refused:
    """What a prompt given to print mode (on the command line, or one stream-json user
    message) sends to the model, read as every front end reads typed text; `Refused`
    when it sends nothing (an unknown command, a built-in of the interactive front ends,
    a command that could not be expanded). Blocks after a leading text block (images)
    go with it. `!text` stays a prompt: nobody would see a shell command run here."""
    blocks: list[ContentBlock] = [TextBlock(text=prompt)] if isinstance(prompt, str) \
        else prompt
    first = blocks[0] if blocks else None
    if not isinstance(first, TextBlock):
        return blocks
    action = await InputInterpreter(session).submit(first.text, blocks[1:])
    match action:
        case SendPrompt():
            return action.content()
        case UnknownCommand():
            return Refused(f"unknown command /{action.name}{did_you_mean(action)} (start "
                           "the prompt with // to send it as /...)", EXIT_USAGE)
        case RunBuiltin():
            return Refused(unavailable_message(action, "print mode"), EXIT_USAGE)
        case CommandFailed(message=message):
            return Refused(message, EXIT_FAILED)
        case RunShell() | NoInput():  # no shell commands here; no text: sent as it came
            return blocks


async def settle_start(session: LiveSession, config: RunConfig, err: TextIO) -> None:
    """What every headless run does between opening the session and its first turn:
    say what an untrusted project's files were left without, wait (bounded) for MCP
    servers so their tools are in the first request, and write the start-up warnings
    before the turn, so a run that ends fast still reports a broken .mcp.json."""
    if session.untrusted:
        err.write(untrusted_notice(session.untrusted) + "\n")
    await session.wait_for_mcp(config.loaded.settings.mcp_connect_timeout)
    for status in session.mcp_statuses():
        if status.status == "failed":
            err.write(f"aistack: MCP server {status.name} failed: {status.error}\n")
    for notice in session.take_notices():
        if notice.level != "info" or config.verbose:
            err.write(f"aistack: {notice.text}\n")
    resume_gc_after_startup()


def report(event: ev.AgentEvent, config: RunConfig, err: TextIO) -> None:
    """Diagnostics on stderr: errors and warnings always, the rest with --verbose.

    Every event type is named, so a new one fails type checking here until someone
    decides whether print mode reports it.
    """
    match event:
        case ev.StreamReset(reason=reason, attempt=attempt, delay=delay):
            if config.verbose:
                err.write(f"retrying ({attempt}) in {delay:.1f}s: {reason}\n")
        case ev.ErrorOccurred(message=message):
            err.write(f"aistack: error: {message}\n")
        case ev.Notice(text=text, level=level):
            if level != "info" or config.verbose:
                err.write(f"aistack: {text}\n")
        case ev.PermissionDecided(behavior=behavior, name=name, reason=reason):
            if behavior == "deny" and config.verbose:
                err.write(f"aistack: denied {name}: {reason}\n")
        case (
            ev.TurnStarted() | ev.TextDelta() | ev.ThinkingDelta() | ev.MessageAdded()
            | ev.ToolCallRequested() | ev.PermissionAsked() | ev.ToolStarted()
            | ev.ToolFinished() | ev.UsageUpdated() | ev.SubagentEvent() | ev.TurnEnded()
            | ev.ToolInputDelta()
        ):
            pass
        case _:
            assert_never(event)
