"""Bash: run a shell command, keeping the working directory between calls.

Each call is a fresh `bash -c` (no state leaks between calls except the directory, which
is what people expect from a terminal); an EXIT trap writes the final `pwd` to a temp
file, which survives `exit N` and leaves the exit status alone. The command runs in its
own process group so a timeout or an Esc kills everything it started. stdout and stderr
share one pipe that we own, so output keeps its interleaving, and once the shell exits
we stop reading even if a background job still holds the pipe. When an editor lends its
terminals, the same sandboxed argv runs in one of them instead (`bash_terminal.py`).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from aistack_tui.permissions.bash_model import CREDENTIAL_NAME
from aistack_tui.permissions.secrets import mask_secrets
from aistack_tui.permissions.targets import PermissionTarget, ShellCommand
from aistack_tui.tools.background import shells_of
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
    current_grant,
)
from aistack_tui.tools.bash_terminal import run_in_terminal
from aistack_tui.tools.editor import current_call_id, editor_terminal
from aistack_tui.tools.process import Captured, kill_group, read_stream, start_group
from aistack_tui.tools.schema import CompactSpec

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
HEAD_BYTES = 16_000
TAIL_BYTES = 12_000
DRAIN_SECONDS = 0.5
"""How long to keep reading after the shell exits (a background job may hold the pipe)."""

EXTRA_ENV = {
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
}


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_OVERWRITTEN = re.compile(r"[^\n]*\r(?!\n)")


def clean_output(text: str) -> str:
    """Output as a terminal would finally show it: no colour codes, and a progress bar's
    carriage-return redraws collapsed to their last state (they are noise to a model)."""
    text = _ANSI.sub("", text)
    return _OVERWRITTEN.sub("", text.replace("\r\n", "\n"))


class BashArgs(ToolArgs):
    command: str
    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Milliseconds (default {DEFAULT_TIMEOUT_MS})",
    )
    description: str | None = Field(
        default=None, description="What the command does, in 5-10 words"
    )
    run_in_background: bool = Field(
        default=False, description="Return at once with a shell id (for servers, watchers)"
    )


def _first_line(command: str, width: int = 100) -> str:
    line = command.strip().split("\n", 1)[0]
    more = "\n" in command.strip()
    if len(line) > width:
        return line[: width - 1] + "…"
    return line + (" …" if more else "")


class BashTool(CompactSpec, Tool[BashArgs]):
    name = "Bash"
    args_model = BashArgs

    def path_argument(self, args: BashArgs) -> str | None:
        return None

    def permission_target(self, args: BashArgs) -> PermissionTarget:
        """The command line, judged part by part."""
        return ShellCommand(args.command)

    def describe(self, args: BashArgs) -> ToolCallDisplay:
        return ToolCallDisplay(
            summary=f"Bash {_first_line(args.command)}",
            detail=args.command
            if not args.description
            else f"# {args.description}\n{args.command}",
            language="bash",
        )

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        notes: list[str] = []
        cwd = ctx.bash_cwd or ctx.cwd
        if not cwd.is_dir():
            notes.append(
                f"(The previous working directory {cwd} no longer exists; "
                f"reset to {ctx.project_root}.)"
            )
            cwd = ctx.project_root
        timeout_ms = args.timeout or DEFAULT_TIMEOUT_MS
        confinement = _Confinement(ctx, cwd)
        await confinement.prepare()
        if args.run_in_background:
            return await self._background(args, ctx, cwd, confinement, notes)
        fd, pwd_file = tempfile.mkstemp(prefix="aistack-cwd-")
        os.close(fd)
        try:
            ran = await self._in_editor(ctx, args.command, cwd, timeout_ms, pwd_file,
                                        confinement)
            output, code, timed_out = ran or await self._execute(
                args.command, cwd, timeout_ms, pwd_file, confinement.wrap, confinement.env(),
                live_output(ctx),
            )
            ctx.bash_cwd = _final_cwd(pwd_file) or cwd
        finally:
            with contextlib.suppress(OSError):
                Path(pwd_file).unlink()
            notes += confinement.finish()
        text = mask_secrets(clean_output(output).rstrip("\n"))
        summary = f"Bash {_first_line(args.command, 60)}"
        if timed_out:
            message = (
                f"Command timed out after {timeout_ms / 1000:g} s and was killed "
                "(with every process it started)."
            )
            body = f"{text}\n\n{message}" if text else message
            return ToolOutput(
                "\n".join([*notes, body]),
                is_error=True,
                display=ToolCallDisplay(
                    summary=f"{summary} (timed out)", detail=text, language="text"
                ),
            )
        parts = [*notes, text or "(no output)"]
        if code != 0:
            parts.append(f"\nExit code: {code}")
        return ToolOutput(
            "\n".join(parts),
            display=ToolCallDisplay(
                summary=summary if code == 0 else f"{summary} (exit {code})",
                detail=text,
                language="text",
            ),
            metadata={"exit_code": code, "cwd": str(ctx.bash_cwd)},
        )

    async def _background(self, args: BashArgs, ctx: ToolContext, cwd: Path,
                          confinement: _Confinement, notes: list[str]) -> ToolOutput:
        """Start the command as a background shell (`tools/background.py`), confined as
        it would be in the foreground; never in an editor's terminal, which the user
        would have to close."""
        shell = await shells_of(ctx).start(
            args.command, cwd=cwd, env=confinement.env(), wrap=confinement.wrap,
            description=args.description or "", on_exit=confinement.finish,
        )
        text = (f"Command running in background with ID: {shell.id}. Read its output "
                f"with TaskOutput (task_id {shell.id!r}); stop it with TaskStop.")
        return ToolOutput(
            "\n".join([*notes, text]),
            display=ToolCallDisplay(
                summary=f"Bash {_first_line(args.command, 60)} (background {shell.id})",
                detail=args.command, language="bash",
            ),
            metadata={"background_task_id": shell.id},
        )

    async def _in_editor(self, ctx: ToolContext, command: str, cwd: Path, timeout_ms: int,
                         pwd_file: str, confinement: _Confinement
                         ) -> tuple[str, int, bool] | None:
        """Run in the editor's terminal when the session has one (`tools/editor.py`);
        None when it has none or the command never started there."""
        terminal = editor_terminal(ctx)
        if terminal is None:
            return None
        return await run_in_terminal(
            terminal, command, cwd=cwd, timeout_ms=timeout_ms, pwd_file=pwd_file,
            wrap=confinement.wrap, env=confinement.env(), tool_use_id=current_call_id.get(),
            head_bytes=HEAD_BYTES, tail_bytes=TAIL_BYTES,
        )

    async def _execute(
        self,
        command: str,
        cwd: Path,
        timeout_ms: int,
        pwd_file: str,
        wrap: Callable[[list[str], list[Path]], list[str]] | None = None,
        env: dict[str, str] | None = None,
        on_output: Callable[[bytes], None] | None = None,
    ) -> tuple[str, int, bool]:
        """(output, exit code, timed out); kills the process group on timeout or cancel."""
        script = f"trap 'pwd >| {shlex.quote(pwd_file)}' EXIT\n{command}"
        argv = ["bash", "-c", script]
        if wrap is not None:
            # The cwd-tracking file must stay writable even where temp dirs are not.
            argv = wrap(argv, [Path(pwd_file)])
        env = env if env is not None else {**os.environ, **EXTRA_ENV}
        read_fd, write_fd = os.pipe()
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        try:
            proc = await start_group(asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
                cwd=cwd, env=env, start_new_session=True))
        except asyncio.CancelledError:
            pipe.close()
            raise
        except OSError as e:
            pipe.close()
            raise ToolError(f"Cannot start {argv[0]}: {e.strerror or e}") from e
        finally:
            os.close(write_fd)
        captured = Captured.with_budget(HEAD_BYTES, TAIL_BYTES)
        transport: asyncio.BaseTransport | None = None
        reading: asyncio.Future[None] | None = None
        timed_out = False
        try:
            reader = asyncio.StreamReader()
            transport, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), pipe
            )
            reading = asyncio.ensure_future(read_stream(reader, captured, on_output))
            try:
                code = await asyncio.wait_for(proc.wait(), timeout_ms / 1000)
            except TimeoutError:
                timed_out = True
                await kill_group(proc)
                code = proc.returncode if proc.returncode is not None else -9
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reading), DRAIN_SECONDS)
        except BaseException:
            # Cancelled (Esc): take down the whole group before letting the cancel through.
            await asyncio.shield(kill_group(proc))
            raise
        finally:
            if reading is not None:
                reading.cancel()
            if transport is not None:
                transport.close()
            else:
                pipe.close()
        return captured.text(), code, timed_out


def live_output(ctx: ToolContext) -> Callable[[bytes], None] | None:
    """What a running command prints, for whoever shows it while it runs (the session's
    `tool_output` service: the TUI's running card), or None when nobody listens.

    Whole lines only, cleaned and with secrets masked as in the final result, so a
    secret split across two reads is never shown half-masked.
    """
    listener = ctx.services.tool_output
    if listener is None:
        return None
    call_id = current_call_id.get()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""

    def feed(chunk: bytes) -> None:
        nonlocal pending
        pending += decoder.decode(chunk)
        if "\n" in pending:
            lines, _, pending = pending.rpartition("\n")
            listener(call_id, mask_secrets(clean_output(lines)) + "\n")

    return feed


class _Confinement:
    """How one command runs in the session's sandbox (`ctx.services.sandbox`), if any.

    The sandbox is known by its Protocol (`tools.services.CommandSandbox`) so the tools
    layer does not import `aistack_tui.sandbox`. The call's grant (`current_grant`) picks
    the tier: read-only with masks, or the project and additional directories writable
    except protected paths; absent protected paths cannot be created (the sandbox mounts
    a placeholder).
    """

    def __init__(self, ctx: ToolContext, cwd: Path) -> None:
        self.sandbox = ctx.services.sandbox
        self.writable = [ctx.project_root, *ctx.additional_directories]
        self.settings_env = ctx.env
        self.cwd = cwd
        self.policy: Any = None

    async def prepare(self) -> None:
        """Build the command's policy. On a thread: it may have to wait for the walk of
        the project that finds what to mask, which must not stall the event loop."""
        if self.sandbox is None:
            return
        try:
            self.policy = await asyncio.to_thread(
                self.sandbox.policy_for, current_grant.get(), self.cwd
            )
        except Exception as e:  # SandboxError: refuse rather than run unconfined
            raise ToolError(f"The sandbox cannot confine this command: {e}") from e

    @property
    def wrap(self) -> Callable[[list[str], list[Path]], list[str]] | None:
        sandbox = self.sandbox
        if sandbox is None:
            return None
        return lambda argv, extra: sandbox.wrap_command(
            argv, cwd=self.cwd, writable=[*self.writable, *extra], policy=self.policy
        )

    def env(self) -> dict[str, str]:
        """The command's environment. A command allowed only as read-only gets no variable
        whose name says it holds a credential: `echo $ANTHROPIC_API_KEY` is read-only."""
        env = {**os.environ, **self.settings_env, **EXTRA_ENV}
        if self.policy is not None and self.policy.tier == "read":
            env = {k: v for k, v in env.items() if not CREDENTIAL_NAME.search(k)}
        return env

    def finish(self) -> list[str]:
        """Notes for the model: what earlier commands left that the sandbox moved away."""
        if self.policy is None or self.sandbox is None:
            return []
        return self.sandbox.after_command(self.policy)


def _final_cwd(pwd_file: str) -> Path | None:
    try:
        text = Path(pwd_file).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    path = Path(text) if text else None
    return path if path is not None and path.is_dir() else None
