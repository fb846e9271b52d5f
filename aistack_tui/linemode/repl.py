"""The line mode's loop: read a prompt, run it through the session, print its events.

Input is taken only between runs, in the style of aider: while the agent works the
terminal belongs to the output (and to the approval prompt when a call asks). Ctrl+C
during a run asks the session to interrupt (the partial answer is kept); a second Ctrl+C
in the same run abandons it at once. At the prompt Ctrl+C clears the line, and on an
empty line a second Ctrl+C in a row quits, as does Ctrl+D. SIGTERM, and SIGHUP when the
terminal closes, end the line mode: the running turn is interrupted (its partial answer
kept), the session closed, and the status is 143 or 129.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncGenerator, Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit.application import create_app_session
from prompt_toolkit.output.plain_text import PlainTextOutput
from prompt_toolkit.utils import is_dumb_terminal
from rich.console import Console
from rich.text import Text

from aistack_tui import __version__
from aistack_tui.agent import events as ev
from aistack_tui.linemode.approval_prompt import LineApprover
from aistack_tui.linemode.commands import COMMANDS
from aistack_tui.linemode.completion import LineCompleter
from aistack_tui.linemode.elicitation_prompt import LineElicitation
from aistack_tui.linemode.prompt import JsonLinesHistory, make_prompt_session
from aistack_tui.linemode.render import LineRenderer
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.llm import types as lt
from aistack_tui.session.config import bypass_on_command_line, next_permission_mode
from aistack_tui.session.history import HISTORY_FILE
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
from aistack_tui.session.mentions import FileIndex
from aistack_tui.settings.layers import ConfigError
from aistack_tui.shutdown.signals import StopSignals
from aistack_tui.shutdown.status import EXIT_HANGUP, EXIT_OK, EXIT_USAGE
from aistack_tui.shutdown.streams import is_closed_stream, silence

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig
    from aistack_tui.session.live import LiveSession

TICK_S = 0.1
SHELL_TIMEOUT_S = 120.0
END_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Ctrl+C is not among them: here it interrupts the turn, or clears the line."""


class LineRepl:
    """One line-mode session: the prompt, the commands and the runs."""

    def __init__(
        self,
        session: LiveSession,
        io: LineIO,
        renderer: LineRenderer,
        approver: LineApprover,
        *,
        history_path: Path | None,
    ) -> None:
        self.session = session
        self.io = io
        self.renderer = renderer
        self.approver = approver
        self.files = FileIndex(session.project_root)
        self.files.resources = session.mcp.resource_mentions
        self.input = InputInterpreter(session, COMMANDS.commands, shell=True)
        self._custom: list[tuple[str, str]] = []
        """(name, description) of the custom command files, for completion and /help."""
        self._preload = ""
        self._quit = False
        self.prompt = make_prompt_session(
            io,
            history=JsonLinesHistory(history_path),
            completer=LineCompleter(self.command_names, self.files),
            mode=lambda: self.session.mode,
            on_cycle_mode=self.cycle_mode,
        )

    # --- CommandHost ----------------------------------------------------------------------

    async def confirm(self, question: str) -> bool:
        return await self.approver.ask_yes_no(question)

    def preload(self, text: str) -> None:
        self._preload = text

    def quit(self) -> None:
        self._quit = True

    # --- the loop ---------------------------------------------------------------------------

    def cycle_mode(self) -> None:
        """Shift+Tab: the next mode; bypassPermissions only if the command line asked."""
        offered = bypass_on_command_line(self.session.config)
        self.session.set_mode(next_permission_mode(self.session.mode, bypass_offered=offered))

    def banner(self) -> None:
        s = self.session
        head = Text(f"aistack {__version__}", style="bold")
        head.append(f" · {s.model} · {s.mode} mode · {s.cwd}", style="dim")
        self.renderer.print(head)
        self.renderer.print(Text(
            "Enter sends · Esc Enter or a trailing \\ adds a line · /help lists commands · "
            "Ctrl+C interrupts · Ctrl+D quits", style="dim"))
        if s.messages:
            self.renderer.notice(f"resumed {s.session_id} ({len(s.messages)} messages)")
        for notice in s.take_notices():
            self.renderer.notice(notice.text, notice.level)
        untrusted = s.untrusted
        if untrusted:
            names = ", ".join(f"{i.kind} {i.name}" for i in untrusted[:5])
            self.renderer.notice(
                f"left out until you trust this project: {names}"
                + (f" and {len(untrusted) - 5} more" if len(untrusted) > 5 else ""),
                "warning",
            )

    async def run(self, first_prompt: str | None = None) -> int:
        """Read and run prompts until the user quits; the exit code."""
        self.banner()
        if first_prompt:
            await self.handle(first_prompt)
        ctrl_c_pending = False
        while not self._quit:
            self.refresh_custom_commands()
            default, self._preload = self._preload, ""
            try:
                text = await self.prompt.prompt_async(default=default)
            except KeyboardInterrupt:
                if ctrl_c_pending:
                    break
                ctrl_c_pending = True
                self.renderer.notice("press Ctrl+C again (or Ctrl+D) to quit")
                continue
            except EOFError:
                break
            ctrl_c_pending = False
            await self.handle(text)
        return EXIT_OK

    def command_names(self) -> list[tuple[str, str]]:
        """Built-in commands, then the custom command files (a built-in name wins), then
        the MCP servers' prompts."""
        builtin = COMMANDS.names()
        taken = {name for name, _ in builtin}
        custom = [(n, h) for n, h in self._custom if n not in taken]
        prompts = [(n, f"{hint} — {h}" if hint else h)
                   for n, h, hint in self.session.mcp.prompt_commands()]
        return builtin + custom + prompts

    def refresh_custom_commands(self) -> None:
        """Re-read the command files (`.claude/commands/`, `.aistack/commands/`, ...)."""
        try:
            found = self.session.custom_commands()
        except OSError:
            return
        self._custom = [
            (name, command.description or "custom command")
            for name in found.names()
            if (command := found.get(name)) is not None
        ]

    async def handle(self, text: str) -> None:
        """One line the user sent: a command, a `!` shell command or a prompt for the
        model, as every front end reads it (`session/input.py`)."""
        action = await self.input.submit(text)
        match action:
            case SendPrompt():
                self.files.invalidate()
                await self.run_turn(action.content())
            case RunBuiltin(available=False):
                self.renderer.notice(unavailable_message(action, "the line mode"), "warning")
            case RunBuiltin(name=name, args=args):
                await self.run_command(name, args)
            case RunShell(command=command):
                await self.run_shell(command)
            case UnknownCommand(name=name):
                self.renderer.notice(
                    f"unknown command /{name} (/help lists them){did_you_mean(action)}",
                    "warning")
            case CommandFailed(message=message):
                self.renderer.notice(message, "error")
            case NoInput():
                pass

    async def run_shell(self, command: str) -> None:
        """`!command`: run it in the project, print what it printed; the model reads it
        with the next prompt, as in the TUI. Ctrl+C stops it (with everything it
        started), not the line mode."""
        task = asyncio.current_task()
        stopped = False

        def on_sigint() -> None:
            nonlocal stopped
            stopped = True
            if task is not None:
                task.cancel()

        try:
            with _sigint_handler(on_sigint):
                result = await self.session.run_user_command(command, SHELL_TIMEOUT_S)
        except asyncio.CancelledError:
            if not stopped or task is None:
                raise
            task.uncancel()
            self.renderer.notice(f"stopped: !{command}", "warning")
            return
        self.renderer.print(Text(f"$ {command}", style="bold"))
        if result.output.strip():
            self.renderer.print(Text(result.output.rstrip("\n")))
        if result.exit_code != 0:
            self.renderer.notice(f"exit code {result.exit_code}", "warning")

    async def run_command(self, name: str, args: str) -> None:
        cmd = COMMANDS.get(name)
        if cmd is None:
            self.renderer.notice(f"unknown command /{name} (/help lists them)", "warning")
            return
        try:
            await cmd.handler(self, args)
        except Exception as e:  # a command's failure is a message, never a crash
            self.renderer.notice(f"/{name} failed: {e}", "error")

    async def run_turn(self, prompt: str | list[lt.ContentBlock]) -> None:
        """Stream one run's events to the renderer; Ctrl+C interrupts it."""
        self.renderer.begin_run()
        task = asyncio.current_task()
        presses = 0
        ended = False

        def on_sigint() -> None:
            # After the turn's end the session only records it (usage, the end-of-turn
            # callbacks): nothing to interrupt, and a second press still abandons that.
            nonlocal presses
            presses += 1
            if presses == 1 and not ended:
                self.renderer.notice("interrupting… (Ctrl+C again to abandon the run)",
                                     "warning")
                self.session.interrupt()
            elif presses > 1 and task is not None:
                task.cancel()

        ticker = asyncio.create_task(self._tick())
        try:
            with _sigint_handler(on_sigint):
                events = self.session.run(prompt)
                try:
                    async for event in events:
                        ended = ended or isinstance(event, ev.TurnEnded)
                        self.renderer.handle(event)
                finally:
                    # Closing the stream early (an abandoned run) lets the agent persist.
                    if isinstance(events, AsyncGenerator):
                        await events.aclose()
        except asyncio.CancelledError:
            if presses < 2 or task is None:
                raise
            task.uncancel()
            self.renderer.end_run()
            self.renderer.notice("run abandoned", "warning")
        except Exception as e:  # the agent reports failures as events; this is a bug's net
            self.renderer.end_run()
            self.renderer.notice(f"{type(e).__name__}: {e}", "error")
        finally:
            ticker.cancel()
            self.renderer.end_run()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self.renderer.tick()


@contextlib.contextmanager
def _sigint_handler(callback: Callable[[], None]) -> Generator[None, None, None]:
    """Route SIGINT to `callback` on the running loop (Unix); elsewhere leave it be."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
    except (NotImplementedError, RuntimeError, ValueError):
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def default_io() -> LineIO:
    """The process's terminal: prompt_toolkit's own input and output, Rich on stdout."""
    return LineIO(Console(file=sys.stdout, highlight=False), errors=Console(stderr=True))


async def run_line_mode(
    config: RunConfig, prompt: str | None = None, io: LineIO | None = None
) -> int:
    """Open a session for `config` and run the REPL; the process exit code."""
    from aistack_tui.bootstrap import open_session
    from aistack_tui.linemode.setup import ask_provider_key
    from aistack_tui.session.config import NoProviderError

    io = io or default_io()
    renderer = LineRenderer(io.console)
    approver = LineApprover(io, renderer)
    if config.trust_prompt is None:
        config.trust_prompt = approver.ask_trust
    picker = config.resume == ""
    if picker:
        config.resume = None  # no picker in a scrolling terminal: /resume lists sessions
    try:
        try:
            session = await open_session(config, approver, interactive=True)
        except NoProviderError:
            if not await ask_provider_key(config, io, renderer):
                raise
            session = await open_session(config, approver, interactive=True)
    except ConfigError as e:  # NoProviderError too: the message names the variables
        (io.errors or io.console).print(Text(f"aistack: {e}", style="red"), soft_wrap=True)
        return EXIT_USAGE
    approver.on_interrupt = session.interrupt
    session.mcp.use_elicitation(LineElicitation(approver))
    main = asyncio.current_task()
    repls: list[LineRepl] = []
    closing = False

    def stop(_signum: int) -> None:
        if closing:
            return  # already on the way out; cancelling would leave things unclosed
        if session.running:
            session.interrupt()  # the partial answer is kept; then the loop ends
            for repl in repls:
                repl.quit()
        elif main is not None:
            main.cancel()  # at the prompt: nothing to keep

    with StopSignals(stop, END_SIGNALS) as signals:
        try:
            with _plain_output_when_dumb(io):
                repl = LineRepl(session, io, renderer, approver,
                                history_path=config.home / HISTORY_FILE)
                repls.append(repl)
                if picker:
                    await repl.run_command("sessions", "")
                status = await repl.run(prompt)
        except asyncio.CancelledError:
            if signals.received is None or main is None:
                raise
            main.uncancel()
            status = EXIT_OK
        except (OSError, ValueError) as e:  # the terminal went away under a write
            if not is_closed_stream(e):
                raise
            silence(sys.stdout, sys.stderr)
            status = EXIT_HANGUP
        finally:
            closing = True
            had_messages = bool(session.messages)
            await session.close("prompt_input_exit" if signals.received is None else "other")
            if had_messages and signals.status is None:
                # As the TUI says on exit: where to pick the conversation up again.
                with contextlib.suppress(OSError, ValueError):
                    io.console.print(Text(
                        f"Session {session.session_id} saved. Resume it with: "
                        f"aistack --classic --resume {session.session_id}", style="dim"),
                        soft_wrap=True)
    return signals.status or status


@contextlib.contextmanager
def _plain_output_when_dumb(io: LineIO) -> Generator[None, None, None]:
    """On a dumb terminal prompt_toolkit still uses its line-by-line prompt, but its output
    object writes cursor escapes (show/hide) whenever a prompt is created; an Emacs shell
    buffer would print them. Its plain-text output writes none."""
    if io.output is not None or not is_dumb_terminal():
        yield
        return
    with create_app_session(output=PlainTextOutput(sys.stdout)):
        yield
