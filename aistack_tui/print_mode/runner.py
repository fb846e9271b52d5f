"""Print mode: one non-interactive run for pipes, scripts and CI.

Nobody can answer a permission prompt here, so every `ask` is denied, the model is told
why, and the call is listed in `permission_denials`. Nobody can answer the trust question
either: what an untrusted project's files ask for (MCP servers, hooks, allow rules...) is
left out unless `--trust-project` is given, and one stderr line says so. Diagnostics go
to stderr; stdout carries only the chosen output format.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import TYPE_CHECKING, TextIO

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import RunConfig, open_session
from aistack_tui.print_mode.formatters import OutputFormat, RunInfo, make_formatter, result_object

if TYPE_CHECKING:
    from aistack_tui.settings.trust import TrustItem

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


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
    from aistack_tui.trust_gate import ignored_summary

    return (
        "aistack: ignored what this project's files ask for (not trusted): "
        f"{ignored_summary(items)}; to apply it, run with --trust-project or trust the "
        "project once in the interactive app"
    )


async def run_print(
    config: RunConfig,
    prompt: str,
    output_format: OutputFormat = "text",
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run `prompt` to completion; returns the process exit code (DESIGN.md §3)."""
    return await _run(config, prompt, output_format, out or sys.stdout, err or sys.stderr)


async def _run(
    config: RunConfig, prompt: str, output_format: OutputFormat, out: TextIO, err: TextIO
) -> int:
    session = await open_session(config, DenyAll())
    if session.untrusted:
        err.write(untrusted_notice(session.untrusted) + "\n")
    formatter = make_formatter(output_format, out)
    ext = session.extensions
    if ext.mcp is not None:
        # Print mode waits (bounded) for MCP servers so their tools are in the first request.
        await ext.wait_for_mcp(
            config.loaded.settings.mcp_connect_timeout,
            session.agent.runner.tools,
            session.agent.model_info.context_window,
        )
        for status in ext.mcp.statuses():
            if status.status == "failed":
                err.write(f"aistack: MCP server {status.name} failed: {status.error}\n")
    resume_gc_after_startup()
    error: str | None = None
    end: ev.TurnEnded | None = None
    try:
        formatter.start(
            RunInfo(
                session_id=session.info.id,
                cwd=str(config.cwd),
                model=session.model_string,
                tools=session.agent.runner.tools.names(),
                permission_mode=session.engine.mode,
                mcp_servers=ext.mcp_statuses(),
            )
        )
        async for event in session.agent.run(prompt):
            formatter.event(event)
            match event:
                case ev.StreamReset(reason=reason, attempt=attempt, delay=delay):
                    if config.verbose:
                        err.write(f"retrying ({attempt}) in {delay:.1f}s: {reason}\n")
                case ev.ErrorOccurred(message=message):
                    error = message
                    err.write(f"aistack: error: {message}\n")
                case ev.Notice(text=text, level=level) if level != "info" or config.verbose:
                    err.write(f"aistack: {text}\n")
                case ev.PermissionDecided(behavior="deny", name=name, reason=reason):
                    if config.verbose:
                        err.write(f"aistack: denied {name}: {reason}\n")
                case ev.TurnEnded() as ended:
                    end = ended
                case _:
                    pass
    except (KeyboardInterrupt, asyncio.CancelledError):
        err.write("aistack: interrupted\n")
        await session.close()
        return EXIT_INTERRUPTED
    await session.close()
    assert end is not None  # run() always ends with TurnEnded
    result = result_object(
        end, session_id=session.info.id, denials=session.agent.runner.denials, error=error
    )
    formatter.finish(result)
    if end.reason == "max_turns":
        err.write(f"aistack: stopped after --max-turns {end.num_turns}\n")

    if end.reason == "completed":
        return EXIT_OK
    if end.reason == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_FAILED
