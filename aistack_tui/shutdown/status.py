"""The exit statuses every front end returns (docs/print-mode.md lists them).

A run ended by a signal exits 128 + the signal's number, as a shell reports a process
killed by it, so a script can tell a Ctrl+C (130) from a `kill` (143) from a reader that
went away (141, SIGPIPE) without parsing stderr.
"""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_FAILED = 1
"""The run failed (provider error, --max-turns) or an unexpected error was logged."""
EXIT_USAGE = 2
EXIT_HANGUP = 128 + signal.SIGHUP
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_TERMINATED = 128 + signal.SIGTERM


def signal_status(signum: int) -> int:
    """The status of a run stopped by `signum` (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + signum
