"""An unexpected error reaches the user as one line; the trace goes to a log file.

A traceback on the terminal tells a user nothing they can act on and hides the one line
that matters; the file keeps everything a bug report needs. Besides the error that ends
`main`, Python prints tracebacks of its own: a thread's uncaught error, an exception in
a finaliser ("Exception ignored in ..."), a log record with `exc_info` when nobody set up
logging. `route_tracebacks` sends those to the same file, for the console script only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import sys
import threading
import traceback
from pathlib import Path


class CrashLog:
    """One file per process under `log_dir`, created on the first trace written."""

    def __init__(self, log_dir: Path) -> None:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.path = log_dir / f"crash-{stamp}-{os.getpid()}.log"

    def write(self, title: str, exc: BaseException | None) -> bool:
        text = "".join(traceback.format_exception(exc)) if exc is not None else ""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(f"=== {dt.datetime.now().isoformat(timespec='seconds')} {title}\n")
                f.write(text)
        except OSError:
            return False
        return True

    def line(self, exc: BaseException, where: str = "") -> str:
        """Log `exc`'s trace; the one line to print (naming the file)."""
        what = describe(exc)
        context = f" in {where}" if where else ""
        if not self.write(what + context, exc):
            return f"aistack: unexpected error{context}: {what} (the trace could not be saved)"
        return f"aistack: unexpected error{context}: {what} (full trace in {self.path})"


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def crash_report(exc: BaseException, log_dir: Path) -> str:
    """Write `exc`'s trace under `log_dir`; the one line to print."""
    return CrashLog(log_dir).line(exc)


def route_tracebacks(log_dir: Path) -> CrashLog:
    """Tracebacks Python would print by itself go to the crash log; stderr gets one line
    (none for finalisers' noise at exit, which the user can do nothing about)."""
    log = CrashLog(log_dir)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None or isinstance(args.exc_value, SystemExit):
            return
        name = args.thread.name if args.thread is not None else "a thread"
        _say(log.line(args.exc_value, f"thread {name}"))

    def unraisable_hook(args: sys.UnraisableHookArgs) -> None:
        log.write(f"{args.err_msg or 'Exception ignored in'}: {args.object!r}", args.exc_value)

    threading.excepthook = thread_hook
    sys.unraisablehook = unraisable_hook
    last_resort = logging.lastResort
    if last_resort is not None:
        last_resort.setFormatter(_OneLine(log))
    return log


class _OneLine(logging.Formatter):
    """The last-resort handler's format: the message, and the trace only in the file."""

    def __init__(self, log: CrashLog) -> None:
        super().__init__("aistack: %(message)s")
        self.log = log

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        text = logging.Formatter("%(message)s").format(_without_trace(record))
        if exc is not None and self.log.write(f"{record.name}: {text}", exc):
            text += f" ({describe(exc)}; full trace in {self.log.path})"
        return f"aistack: {text}"


def _without_trace(record: logging.LogRecord) -> logging.LogRecord:
    copy = logging.makeLogRecord(record.__dict__)
    copy.exc_info, copy.exc_text, copy.stack_info = None, None, None
    return copy


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
