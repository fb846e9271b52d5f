"""The argument parser every `aistack` command line goes through, and the usage exit code.

Its own module so the main parser and the subcommands' parser share it without importing
each other.
"""

from __future__ import annotations

import argparse
import sys

EXIT_USAGE = 2


class CliParser(argparse.ArgumentParser):
    """argparse that exits 2 with one line saying what to fix (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"aistack: {message} (see `aistack --help`)\n")
        raise SystemExit(EXIT_USAGE)
