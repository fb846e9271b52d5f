"""What one sandboxed command may touch: its tier, its network, and the paths it must not.

The permission engine decides a command may run and with which `ExecGrant`; this module
turns that grant into the concrete lists the sandbox binds:

- `hidden`: paths masked for the command (an empty file or directory bound over them):
  every path a Read deny rule covers, and on the read-only tier the secrets files no allow
  rule names. Found by walking the directories the rules and secrets can live in.
- `frozen`: paths that stay read-only although the command may write around them: the
  protected paths (`.git/config`, `.git/hooks`, `.aistack/`, `.claude/`, `.agents/`,
  `.mcp.json`, `.envrc`, shell start-up files) and every path an Edit deny rule covers.
- `absent_protected`: protected paths that do not exist yet. A bind needs something to
  bind over, so these cannot be frozen; the Bash tool removes any of them a command
  creates and tells the model (see `created_protected`).

The walk is the only costly part (tens of milliseconds for thousands of files), so it runs
on a background thread when the session starts and after every command, while the model
thinks; a command waits only for a walk still under way, and walks itself only when the
last result is older than `SCAN_TTL_SECONDS`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.permissions.paths import (
    PROJECT_RUN_FILES,
    PROTECTED_DIRS,
    SHELL_STARTUP_FILES,
    is_within,
)
from aistack_tui.permissions.types import ExecGrant, ExecTier

SCAN_TTL_SECONDS = 10.0
MAX_SCANNED_ENTRIES = 50_000
"""A walk stops here (a home directory can hold millions of files); what it found stays."""
MAX_MASKS = 400
"""bwrap gets one mount per mask; past this the command is refused rather than slowed."""

# Directories never walked for secrets: huge, generated, and full of harmless `*.pem`
# (certifi's cacert.pem). A deny rule that names something inside one is still honoured:
# its own root is walked.
_SKIP_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", "site-packages", ".cache", "target"}
)

# Inside every writable root: what steers the tools or runs on its own (the engine's
# protected paths; of `.git/` only its config and hooks, since commits must still work).
PROTECTED_IN_ROOT: tuple[str, ...] = (
    ".git/config",
    ".git/hooks",
    *sorted(PROTECTED_DIRS - {".git"}),
    *PROJECT_RUN_FILES,
)
# In the home directory: shell start-up files (frozen where home is writable) and
# credentials (hidden on the read-only tier).
HOME_STARTUP: tuple[str, ...] = (*SHELL_STARTUP_FILES, ".config/fish")
HOME_SECRETS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker/config.json", ".kube",
    ".npmrc", ".pypirc", ".config/gh", ".config/gcloud", ".azure", ".aistack/credentials.json",
)


class SandboxPolicyError(Exception):
    """The command cannot be confined as asked (e.g. far too many paths to mask)."""


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """Everything the sandbox needs to confine one command."""

    tier: ExecTier
    network: bool
    hidden: tuple[Path, ...] = ()
    frozen: tuple[Path, ...] = ()
    absent_protected: tuple[Path, ...] = ()


HidePredicate = Callable[[Path, ExecTier], bool]
FreezePredicate = Callable[[Path], bool]


@dataclass(slots=True)
class _Scan:
    at: float
    hidden_read: list[Path]
    hidden_write: list[Path]
    frozen: list[Path]


class ExposurePolicy:
    """Builds an `ExecPolicy` for a grant from the engine's rules and the file system.

    `hides(path, tier)` and `freezes(path)` are the engine's predicates; `rule_roots()`
    lists where deny rules can match. `roots` are the project and additional directories.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        home: Path,
        *,
        hides: HidePredicate,
        freezes: FreezePredicate,
        rule_roots: Callable[[], Iterable[Path]] = list,
        secret_files: Sequence[Path] = (),
    ) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        self.home = Path(os.path.realpath(home))
        self._hides = hides
        self._freezes = freezes
        self._rule_roots = rule_roots
        self._secret_files = [Path(os.path.realpath(p)) for p in secret_files]
        self._scan: _Scan | None = None
        self._pending: concurrent.futures.Future[_Scan] | None = None
        self._lock = threading.Lock()

    def policy(self, grant: ExecGrant, *, keep_visible: Sequence[Path] = ()) -> ExecPolicy:
        """The policy for one command; `keep_visible` (its cwd) is never masked whole."""
        scan = self._fresh_scan()
        visible = [Path(os.path.realpath(p)) for p in keep_visible]
        hidden = scan.hidden_read if grant.tier == "read" else scan.hidden_write
        hidden = _outermost(p for p in hidden if not any(is_within(v, p) for v in visible))
        frozen = [p for p in scan.frozen if not any(is_within(p, h) for h in hidden)]
        if len(hidden) + len(frozen) > MAX_MASKS:
            raise SandboxPolicyError(
                f"{len(hidden) + len(frozen)} paths would need masking (limit {MAX_MASKS});"
                " narrow the deny rules to directories"
            )
        absent = [] if grant.tier == "read" else self._absent_protected()
        return ExecPolicy(
            grant.tier, grant.network, tuple(hidden), tuple(frozen), tuple(absent)
        )

    def prefetch(self) -> None:
        """Walk again on a daemon thread, so the next command finds a fresh result.

        Called when the session starts and after every command (which may have created
        files): the model's next turn takes longer than the walk, so a command rarely
        waits for one. Exit never waits for it.
        """
        with self._lock:
            if self._pending is not None and not self._pending.done():
                return
            future: concurrent.futures.Future[_Scan] = concurrent.futures.Future()
            self._pending = future

        def work() -> None:
            try:
                future.set_result(self._walk(time.monotonic()))
            except BaseException as error:  # handed to whoever waits for it
                future.set_exception(error)

        threading.Thread(target=work, name="sandbox-walk", daemon=True).start()

    def settle(self) -> None:
        """Wait for a background walk under way (tests and benchmarks: "the model's turn
        has passed")."""
        pending = self._pending
        if pending is not None:
            with contextlib.suppress(Exception):
                pending.result()

    # --- the walk -------------------------------------------------------------------------

    def _fresh_scan(self) -> _Scan:
        pending = self._pending
        if pending is not None:
            with contextlib.suppress(Exception):
                scan = pending.result()  # a walk under way is newer than anything cached
                if self._scan is None or scan.at >= self._scan.at:
                    self._scan = scan
            self._pending = None if pending.done() else pending
        now = time.monotonic()
        if self._scan is None or now - self._scan.at > SCAN_TTL_SECONDS:
            self._scan = self._walk(now)
        return self._scan

    def _walk(self, now: float) -> _Scan:
        hidden_read: list[Path] = []
        hidden_write: list[Path] = []
        frozen: list[Path] = []
        seen: set[Path] = set()
        budget = [MAX_SCANNED_ENTRIES]

        def consider(path: Path, is_dir: bool) -> bool:
            """Classify one entry; True when it was masked whole (do not descend)."""
            if path in seen:
                return True
            seen.add(path)
            probe = path / "\u2400probe" if is_dir else path
            write_hidden = self._hides(probe, "write")
            read_hidden = write_hidden or self._hides(probe, "read")
            if write_hidden:
                hidden_write.append(path)
            if read_hidden:
                hidden_read.append(path)
            elif self._freezes(probe):
                frozen.append(path)
            return read_hidden and (not is_dir or write_hidden)

        starts = [*self.roots, *self._rule_roots()]
        for start in dict.fromkeys(Path(os.path.realpath(s)) for s in starts):
            if start.is_dir() and not any(is_within(r, start) and r != start for r in self.roots):
                self._walk_dir(start, consider, budget)
            elif start.exists() and not start.is_dir():
                consider(start, False)
        for path in self._home_paths(HOME_SECRETS) + self._secret_files:
            if path.exists() and path not in seen:
                seen.add(path)
                hidden_read.append(path)
        for root in self.roots:
            for rel in PROTECTED_IN_ROOT:
                path = root / rel
                if path.exists() and path not in frozen:
                    frozen.append(path)
        for path in self._home_paths(HOME_STARTUP):
            if path.exists() and path not in frozen:
                frozen.append(path)
        frozen = [p for p in frozen if not any(is_within(p, h) for h in hidden_write)]
        return _Scan(now, hidden_read, hidden_write, frozen)

    def _walk_dir(
        self, start: Path, consider: Callable[[Path, bool], bool], budget: list[int]
    ) -> None:
        stack = [start]
        while stack and budget[0] > 0:
            current = stack.pop()
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            for entry in entries:
                budget[0] -= 1
                path = Path(entry.path)
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if entry.is_symlink():
                    # A symlink is judged by where it points; the sandbox masks the target.
                    target = Path(os.path.realpath(path))
                    if target.exists():
                        consider(target, target.is_dir())
                    continue
                if not consider(path, is_dir) and is_dir and entry.name not in _SKIP_DIRS:
                    stack.append(path)

    def _home_paths(self, names: Sequence[str]) -> list[Path]:
        return [Path(os.path.realpath(self.home / n)) for n in names]

    def _absent_protected(self) -> list[Path]:
        out: list[Path] = []
        for root in self.roots:
            for rel in PROTECTED_IN_ROOT:
                path = root / rel
                if not path.exists() and not path.is_symlink() and path.parent.is_dir():
                    out.append(path)
        return out


def created_protected(policy: ExecPolicy) -> list[Path]:
    """Remove the protected paths a command created although they did not exist before.

    The kernel could not freeze them (there was nothing to bind over), so this is the
    wall for them: the next run would have executed what the command wrote there.
    """
    removed: list[Path] = []
    for path in policy.absent_protected:
        if not (path.exists() or path.is_symlink()):
            continue
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """Paths not inside another one of them: a mount below a masked directory would fail."""
    ordered = sorted(dict.fromkeys(paths), key=lambda p: len(p.parts))
    out: list[Path] = []
    for path in ordered:
        if not any(is_within(path, kept) for kept in out):
            out.append(path)
    return out
