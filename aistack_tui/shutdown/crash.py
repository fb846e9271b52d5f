"""An unexpected error reaches the user as one line; the trace goes to a log file.

A traceback on the terminal tells a user nothing they can act on and hides the one line
that matters; the file keeps everything a bug report needs.
"""

from __future__ import annotations

import datetime as dt
import os
import traceback
from pathlib import Path


def crash_report(exc: BaseException, log_dir: Path) -> str:
    """Write `exc`'s trace under `log_dir`; the one line to print (naming the file)."""
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = log_dir / f"crash-{stamp}-{os.getpid()}.log"
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
    except OSError as e:
        return f"aistack: unexpected error: {what} (the trace could not be saved: {e})"
    return f"aistack: unexpected error: {what} (full trace in {path})"
