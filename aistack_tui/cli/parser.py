"""The argument parser every `aistack` command line goes through, and the usage exit code.

Its own module so the main parser and the subcommands' parser share it without importing
each other.
"""

from __future__ import annotations

import argparse
import sys

EXIT_USAGE = 2


UNRECOGNIZED = "unrecognized arguments: "


class CliParser(argparse.ArgumentParser):
    """argparse that exits 2 with one line saying what to fix (no usage dump).

    An option aistack does not know is named as such: a program written for Claude Code
    (the Agent SDK's `extra_args`, a flag from a newer release) then learns which of its
    flags aistack cannot honour, instead of a session that quietly runs without it.
    """

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.startswith(UNRECOGNIZED):
            words = message[len(UNRECOGNIZED):].split()
            flags = [w.split("=", 1)[0] for w in words if w.startswith("-")]
            if flags:
                message = (
                    f"unknown option{'s' if len(flags) > 1 else ''} {', '.join(flags)}: "
                    "aistack does not support "
                    f"{'them' if len(flags) > 1 else 'it'} (docs/print-mode.md lists the "
                    "Claude Code flags it understands)"
                )
        sys.stderr.write(f"aistack: {message} (see `aistack --help`)\n")
        raise SystemExit(EXIT_USAGE)
