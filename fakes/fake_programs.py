"""FakePrograms: stand-ins for the user's programs (an editor, a clipboard tool) as
executable scripts in a directory put first on PATH."""

from __future__ import annotations

import stat
from pathlib import Path


class FakePrograms:
    """`add(name, script)` writes an executable `name` running the sh `script`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def add(self, name: str, script: str) -> Path:
        path = self.directory / name
        path.write_text(f"#!/bin/sh\n{script}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path
