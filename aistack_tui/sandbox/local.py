"""LocalSandbox: commands run as plain subprocesses; only path validation confines them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aistack_tui.sandbox.base import Sandbox
from aistack_tui.sandbox.policy import ExecPolicy


class LocalSandbox(Sandbox):
    """What Bash has always done: the command runs with the user's full rights.

    The permission engine is the only guard; `validate_path` gives tools the seed's
    restrict-to-workspace check without an OS boundary.
    """

    name = "local"
    confined = False

    def wrap_command(
        self,
        argv: list[str],
        *,
        cwd: Path,
        writable: Sequence[Path] = (),
        policy: ExecPolicy | None = None,
    ) -> list[str]:
        return list(argv)
