"""Bash in the editor's terminal: the sandbox's own argv, run where the user watches it.

The editor is handed exactly the argv the Bash tool would start itself (`bwrap ... --
bash -c SCRIPT` with the tier the permission engine granted), so a command in the
editor's terminal is as confined as one run here. Only the environment needs care: an
editor starts a terminal with its own variables merged in, and a command allowed only as
read-only must not see credentials. So the script begins by dropping every inherited
variable and loading the ones the Bash tool would pass from a file only the user can
read (never on a command line, where other users could see it, nor in the protocol,
where an editor may log it).

Whether the command started is known from the cwd-tracking file: it holds a marker
until the script's first line runs. A terminal that never got that far (an editor on
another machine, where our temp files do not exist) leaves it, and the command is run
here instead; one that did is never run twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from aistack_tui.tools.base import ToolError
from aistack_tui.tools.process import Captured, kill_by_command_line
from aistack_tui.tools.services import EditorTerminal, TerminalRun

log = logging.getLogger(__name__)

OUTPUT_BYTE_LIMIT = 1_000_000
"""What the editor keeps of a command's output (it cuts from the beginning); the Bash
tool then keeps a head and a tail of that, as it does with its own pipe."""
NOT_STARTED = "aistack: not started"
KEPT_BY_BASH = ("PWD", "OLDPWD", "SHLVL")
"""Variables bash sets for itself: copying ours over them would lie about the cwd."""

Wrap = Callable[[list[str], list[Path]], list[str]]


def env_prelude(env_file: str) -> str:
    """Script lines that replace the inherited environment with the one in `env_file`
    (NUL-separated NAME=VALUE), or exit 125 before anything else runs."""
    q = shlex.quote(env_file)
    kept = "|".join(KEPT_BY_BASH)
    return (
        f"[ -r {q} ] || exit 125\n"
        f'for _n in $(compgen -e); do case $_n in {kept}) ;; *) unset -- "$_n" 2>/dev/null;; '
        "esac; done\n"
        f'while IFS= read -r -d "" _kv; do export -- "$_kv" 2>/dev/null; done < {q}\n'
        "unset _n _kv\n"
    )


def write_env_file(env: Mapping[str, str]) -> str:
    """The environment in a new 0600 temp file; the caller removes it."""
    fd, path = tempfile.mkstemp(prefix="aistack-env-")
    with os.fdopen(fd, "wb") as f:
        for name, value in env.items():
            if name in KEPT_BY_BASH or "=" in name or "\0" in name or "\0" in value:
                continue
            f.write(f"{name}={value}".encode(errors="surrogateescape") + b"\0")
    return path


def _started(pwd_file: str) -> bool:
    try:
        return Path(pwd_file).read_text(encoding="utf-8", errors="replace") != NOT_STARTED
    except OSError:
        return True  # unknown: never risk running a command twice


def _exit_code(code: int | None, signal_name: str | None) -> int:
    """The code as asyncio reports one: negative for a signal."""
    if code is not None:
        return code
    if signal_name:
        with contextlib.suppress(KeyError):
            return -signal.Signals[signal_name if signal_name.startswith("SIG")
                                   else f"SIG{signal_name}"].value
    return -1


async def run_in_terminal(
    terminal: EditorTerminal,
    command: str,
    *,
    cwd: Path,
    timeout_ms: int,
    pwd_file: str,
    wrap: Wrap | None,
    env: Mapping[str, str],
    tool_use_id: str,
    head_bytes: int,
    tail_bytes: int,
) -> tuple[str, int, bool] | None:
    """(output, exit code, timed out) of `command` run in an editor terminal, or None
    when it never started there (the caller runs it itself)."""
    env_file = write_env_file(env)
    try:
        Path(pwd_file).write_text(NOT_STARTED, encoding="utf-8")
        script = (f"{env_prelude(env_file)}: >| {shlex.quote(pwd_file)}\n"
                  f"trap 'pwd >| {shlex.quote(pwd_file)}' EXIT\n{command}")
        argv = ["bash", "-c", script]
        if wrap is not None:
            # Both files must be reachable where temp dirs are private (read-only tier).
            argv = wrap(argv, [Path(pwd_file), Path(env_file)])
        try:
            run = await terminal.create(argv, cwd=cwd, env={},
                                        output_byte_limit=OUTPUT_BYTE_LIMIT,
                                        tool_use_id=tool_use_id)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the editor refused: run it here, as without an editor
            log.warning("editor terminal: create failed: %s", e)
            return None
        result = await _follow(run, argv, timeout_ms, head_bytes, tail_bytes, pwd_file)
    finally:
        with contextlib.suppress(OSError):
            Path(env_file).unlink()
    if result is None or not _started(pwd_file):
        return None
    return result


async def _follow(run: TerminalRun, argv: list[str], timeout_ms: int, head_bytes: int,
                  tail_bytes: int, pwd_file: str) -> tuple[str, int, bool] | None:
    """Wait for the command (killing it on timeout or cancel), then take its output.

    After the editor's kill, whatever still runs `argv` on this machine is killed too:
    a terminal kills bwrap's process group, which misses a sandbox bwrap had only just
    cloned (see `kill_by_command_line`)."""
    timed_out = False
    try:
        try:
            # Not `wait_for`: on 3.11 it can swallow the cancel of an interrupted turn.
            async with asyncio.timeout(timeout_ms / 1000):
                code, signal_name = await run.wait_for_exit()
            exit_code = _exit_code(code, signal_name)
        except TimeoutError:
            timed_out = True
            await run.kill()
            kill_by_command_line(argv)
            exit_code = -signal.SIGKILL.value
        text, cut = await run.output()
    except asyncio.CancelledError:
        # Interrupted (Esc, session/cancel): the command stops with the turn.
        with contextlib.suppress(Exception):
            await asyncio.shield(run.kill())
        kill_by_command_line(argv)
        raise
    except Exception as e:
        if not _started(pwd_file):
            log.warning("editor terminal failed before the command started: %s", e)
            return None
        raise ToolError(f"The editor's terminal failed while the command ran: {e}") from e
    finally:
        with contextlib.suppress(Exception):
            await asyncio.shield(run.release())
    captured = Captured.with_budget(head_bytes, tail_bytes)
    captured.add(text.encode(errors="replace"))
    output = captured.text()
    if cut:
        output = f"… [the editor kept only the last {OUTPUT_BYTE_LIMIT} bytes] …\n{output}"
    return output, exit_code, timed_out
