"""What one sandboxed command may touch: its tier, its network, and the paths it must not.

The permission engine decides a command may run and with which `ExecGrant`; this module
turns that grant into the concrete lists the sandbox binds. The rule behind every list:
whatever a confined command can write is untrusted input to everything that later runs
outside the sandbox (git, the user's shell, the next session), so what later runs code is
kept out of its reach by the kernel, not judged afterwards.

- `hidden`: paths masked for the command (access denied): every path a Read deny rule
  covers, and on the read-only tier the secrets files no allow rule names. Found by
  walking the directories the rules and secrets can live in; a walk that cannot finish
  refuses the command instead of running it with masks missing.
- `frozen`: paths that stay read-only although the command may write around them: the
  protected paths (`.aistack/`, `.claude/`, `.agents/`, `.mcp.json`, `.envrc`), the
  user's home configuration and shell start-up files wherever home is writable, aistack's
  own home, every path an Edit deny rule covers, and git's metadata: a repository's whole
  `.git` for a command that does not run git; for one that does, its config, hooks,
  info/, commondir and the admin files of submodules and linked worktrees.
- `placeholders`: protected paths that do not exist yet. An empty read-only directory (or
  file, for a home configuration file git or a shell reads) is mounted there for the
  command's life, so it cannot create them; the sandbox removes the empty mount point
  afterwards.
- `pinned`: directories bound onto themselves: a mount point cannot be renamed or
  replaced, so no command can move a protected or denied path's parent away and write a
  new one in its place (`mv .git x`, `mv private p2 && mkdir private`).
- `sockets`: the host's Unix sockets outside the temp and runtime directories (which the
  sandbox replaces whole), read from /proc/net/unix: masked, since a read-only bind does
  not stop `connect()`.

The walk is the only costly part (tens of milliseconds for thousands of files), so it runs
on a background thread when the session starts and after every command, while the model
thinks; a command waits only for a walk still under way, and walks itself only when the
last result is older than `SCAN_TTL_SECONDS`. The walk after a command also looks for git
repositories that appeared during the session: one whose configuration or hooks would run
a program is renamed out of git's way (`git_metadata.py`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aistack_tui.permissions.paths import (
    HOME_CONFIG_PATHS,
    PROJECT_RUN_FILES,
    PROTECTED_DIRS,
    SHELL_STARTUP_FILES,
    is_within,
)
from aistack_tui.permissions.types import ExecGrant, ExecTier
from aistack_tui.sandbox.git_metadata import (
    GIT_ADMIN_FILES,
    git_dir_runs_program,
    git_paths,
    quarantine_new_git,
)

SCAN_TTL_SECONDS = 10.0
MAX_SCANNED_ENTRIES = 200_000
"""A walk that reaches this many entries stops, and commands are refused until the tree
is smaller or the deny rules narrower: masks that might be missing are not masks."""
WALK_NICENESS = 10
"""The background walk's thread priority (nice value; only lowered, never raised)."""
MAX_MASKS = 400
"""bwrap gets one mount per mask; past this the command is refused rather than slowed."""

# Directories not walked for secrets files: huge, generated, and full of harmless `*.pem`
# (certifi's cacert.pem). Below a directory a deny rule names they are walked all the same.
_SKIP_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", "site-packages", ".cache", "target"}
)

# Inside every writable root: what steers the tools or runs on its own (the engine's
# protected paths); `.git` is handled on its own (see `git_metadata.git_paths`).
PROTECTED_IN_ROOT: tuple[str, ...] = (*sorted(PROTECTED_DIRS - {".git"}), *PROJECT_RUN_FILES)
# In the home directory: start-up files and configuration, frozen wherever home is
# writable (the project is home, or home is an additional directory), and credentials
# (hidden on the read-only tier).
HOME_PROTECTED: tuple[str, ...] = (*SHELL_STARTUP_FILES, *HOME_CONFIG_PATHS)
# Of those, the ones programs read as files: an absent one gets an empty file placeholder
# (git refuses to start when ~/.gitconfig is a directory), the rest an empty directory.
HOME_FILE_NAMES: frozenset[str] = frozenset(
    {*SHELL_STARTUP_FILES, ".gitconfig", ".pam_environment", ".vimrc", ".emacs",
     ".tmux.conf", ".npmrc", ".pypirc", ".cargo/config", ".cargo/config.toml",
     ".claude.json", ".netrc", ".git-credentials"}
)
HOME_SECRETS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker/config.json", ".kube",
    ".npmrc", ".pypirc", ".pgpass", ".config/gh", ".config/hub", ".config/gcloud", ".azure",
    ".oci", ".config/doctl", ".terraform.d/credentials.tfrc.json",
    ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
    ".config/github-copilot", ".aistack/credentials.json",
)
# Directories whose sockets need no mask of their own: the sandbox replaces them whole.
_REPLACED_DIRS: tuple[Path, ...] = (Path("/tmp"), Path("/var/tmp"), Path("/run"),
                                    Path("/var/run"), Path("/dev"), Path("/proc"))


class SandboxPolicyError(Exception):
    """The command cannot be confined as asked (e.g. far too many paths to mask)."""


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """Everything the sandbox needs to confine one command (see the module docstring)."""

    tier: ExecTier
    network: bool
    git: bool = False
    hidden: tuple[Path, ...] = ()
    frozen: tuple[Path, ...] = ()
    placeholders: tuple[Path, ...] = ()
    pinned: tuple[Path, ...] = ()
    sockets: tuple[Path, ...] = ()
    placeholder_files: frozenset[Path] = frozenset()
    """Placeholders mounted as an empty file rather than an empty directory."""


HidePredicate = Callable[[Path, ExecTier], bool]
FreezePredicate = Callable[[Path], bool]


@dataclass(slots=True)
class _Scan:
    at: float
    hidden_read: list[Path]
    hidden_write: list[Path]
    frozen: list[Path]
    git_entries: list[Path] = field(default_factory=list[Path])
    sockets: list[Path] = field(default_factory=list[Path])
    incomplete: bool = False


class ExposurePolicy:
    """Builds an `ExecPolicy` for a grant from the engine's rules and the file system.

    `hides(path, tier)` and `freezes(path)` are the engine's predicates; `rule_roots()`
    lists where deny rules can match. `roots` are the project and additional directories
    (everything a write-tier command may write); `aistack_home` is never writable.
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
        aistack_home: Path | None = None,
    ) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        self.home = Path(os.path.realpath(home))
        self.aistack_home = Path(os.path.realpath(aistack_home)) if aistack_home else None
        self._hides = hides
        self._freezes = freezes
        self._rule_roots = rule_roots
        self._secret_files = [Path(os.path.realpath(p)) for p in secret_files]
        self._scan: _Scan | None = None
        self._pending: concurrent.futures.Future[_Scan] | None = None
        self._lock = threading.Lock()
        self._known_git: set[Path] | None = None
        self.quarantined: list[str] = []
        """A note for the model per new repository made harmless, until reported."""

    def policy(self, grant: ExecGrant, *, keep_visible: Sequence[Path] = ()) -> ExecPolicy:
        """The policy for one command. `keep_visible` (its cwd) must not lie inside a
        masked path: such a command is refused, since unmasking would show it all."""
        scan = self._fresh_scan()
        if scan.incomplete:
            raise SandboxPolicyError(
                f"the project holds more than {MAX_SCANNED_ENTRIES} files and directories "
                "to look through for denied and secrets files, so the masks cannot be "
                "trusted; run aistack in a smaller directory or narrow the deny rules"
            )
        hidden = _outermost(scan.hidden_read if grant.tier == "read" else scan.hidden_write)
        for cwd in keep_visible:
            cwd = Path(os.path.realpath(cwd))
            inside = next((h for h in hidden if is_within(cwd, h)), None)
            if inside is not None:
                raise SandboxPolicyError(
                    f"the working directory {cwd} is inside {inside}, which is masked for "
                    "commands; cd to a directory outside it first"
                )
        if grant.tier == "read":
            # Everything is read-only already: only the masks and the sockets matter.
            sockets = [p for p in scan.sockets if not _inside_any(p, hidden)]
            return ExecPolicy("read", grant.network, False, tuple(hidden), (), (), (),
                              tuple(sockets))
        return self._write_policy(scan, grant, hidden)

    def _write_policy(self, scan: _Scan, grant: ExecGrant, hidden: list[Path]) -> ExecPolicy:
        """The write tier: the masks, and what stays read-only around what it may write."""
        frozen = [*scan.frozen, *self._home_frozen(), *self._own_home()]
        placeholders, as_files = self._placeholders(frozen, grant.git)
        git_frozen, git_pinned, git_absent = git_paths(scan.git_entries, grant.git)
        frozen += git_frozen
        placeholders += [p for p in git_absent if p not in placeholders]
        as_files += [p for p in git_absent if p.name in GIT_ADMIN_FILES]
        frozen = [
            p for p in dict.fromkeys(frozen) if self._writable(p) and not _inside_any(p, hidden)
        ]
        placeholders = [p for p in placeholders if not _inside_any(p, hidden)]
        pinned = self._ancestors([*hidden, *frozen, *placeholders]) + git_pinned
        pinned = [p for p in dict.fromkeys(pinned) if p not in frozen]
        sockets = [p for p in scan.sockets if not _inside_any(p, [*hidden, *frozen])]
        count = len(hidden) + len(frozen) + len(placeholders) + len(pinned) + len(sockets)
        if count > MAX_MASKS:
            raise SandboxPolicyError(
                f"{count} paths would need masking (limit {MAX_MASKS});"
                " narrow the deny rules to directories"
            )
        return ExecPolicy(
            "write", grant.network, grant.git, tuple(hidden), tuple(frozen),
            tuple(placeholders), tuple(pinned), tuple(sockets), frozenset(as_files),
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
            # Below the session's own work: on a big tree the walk must not slow the first
            # request (Linux lets a thread lower its own priority).
            with contextlib.suppress(OSError, AttributeError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WALK_NICENESS)
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

    # --- what to freeze -------------------------------------------------------------------

    def _writable(self, path: Path) -> bool:
        return any(is_within(path, r) for r in self.roots)

    def _home_frozen(self) -> list[Path]:
        """The user's home configuration that a writable root reaches (project = home)."""
        out: list[Path] = []
        for rel in HOME_PROTECTED:
            path = self.home / rel
            if self._writable(path) and (path.exists() or path.is_symlink()):
                out.append(path)
        return out

    def _own_home(self) -> list[Path]:
        home = self.aistack_home
        return [home] if home is not None and home.exists() and self._writable(home) else []

    def _placeholders(
        self, frozen: Sequence[Path], git: bool
    ) -> tuple[list[Path], list[Path]]:
        """Absent protected paths whose parent a command could create them in. A command
        that runs git may create a repository (`git init`, `git clone`): what it leaves is
        checked right after it (`quarantine_new_git`)."""
        wanted: list[tuple[Path, bool]] = []
        for root in self.roots:
            wanted += [(root / rel, False) for rel in PROTECTED_IN_ROOT]
            if not git and not os.path.lexists(root / ".git"):
                wanted.append((root / ".git", False))
        for rel in HOME_PROTECTED:
            wanted.append((self.home / rel, rel in HOME_FILE_NAMES))
        if self.aistack_home is not None:
            wanted.append((self.aistack_home, False))
        out: list[Path] = []
        files: list[Path] = []
        for path, as_file in wanted:
            if os.path.lexists(path) or not path.parent.is_dir():
                continue
            if not self._writable(path.parent) or any(is_within(path, f) for f in frozen):
                continue
            out.append(path)
            if as_file:
                files.append(path)
        return out, files

    def _ancestors(self, paths: Iterable[Path]) -> list[Path]:
        """Directories between a writable root and each path (exclusive), to pin."""
        out: list[Path] = []
        for path in paths:
            root = next((r for r in self.roots if is_within(path, r) and path != r), None)
            if root is None:
                continue
            parent = path.parent
            while parent != root and is_within(parent, root):
                out.append(parent)
                parent = parent.parent
        return out

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
        scan = _Scan(now, [], [], [])
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
                scan.hidden_write.append(path)
            if read_hidden:
                scan.hidden_read.append(path)
            elif self._freezes(probe):
                scan.frozen.append(path)
            return read_hidden and (not is_dir or write_hidden)

        # Where deny rules can match first, walked whole (skipped directories included),
        # then the roots for secrets files and repositories.
        deny_starts = [Path(os.path.realpath(s)) for s in self._rule_roots()]
        for start in dict.fromkeys(deny_starts):
            if start.is_dir():  # git's objects hold no file a path rule names
                self._walk_dir(start, consider, budget, scan, skip=frozenset({".git"}))
            elif start.exists():
                consider(start, False)
        for start in self.roots:
            if start.is_dir():
                self._walk_dir(start, consider, budget, scan, skip=_SKIP_DIRS)
        scan.incomplete = budget[0] <= 0
        for path in self._home_paths(HOME_SECRETS) + self._secret_files:
            if path.exists() and path not in seen:
                seen.add(path)
                scan.hidden_read.append(path)
        scan.frozen = [p for p in scan.frozen
                       if not any(is_within(p, h) for h in scan.hidden_write)]
        scan.sockets = host_sockets(self.roots)
        self._note_git(scan.git_entries)
        return scan

    def _walk_dir(
        self,
        start: Path,
        consider: Callable[[Path, bool], bool],
        budget: list[int],
        scan: _Scan,
        *,
        skip: frozenset[str],
    ) -> None:
        queue = [start]  # breadth first: what lies near the top is found first
        while queue and budget[0] > 0:
            current = queue.pop(0)
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
                if entry.name == ".git" and path not in scan.git_entries:
                    scan.git_entries.append(path)
                if entry.is_symlink():
                    # A symlink is judged by where it points; the sandbox masks the target.
                    target = Path(os.path.realpath(path))
                    if target.exists():
                        consider(target, target.is_dir())
                    continue
                if not consider(path, is_dir) and is_dir and entry.name not in skip:
                    queue.append(path)

    def _home_paths(self, names: Sequence[str]) -> list[Path]:
        return [Path(os.path.realpath(self.home / n)) for n in names]

    # --- repositories a command created ----------------------------------------------------

    def _note_git(self, entries: list[Path]) -> None:
        """The first walk learns the user's repositories; later walks check new ones."""
        with self._lock:
            if self._known_git is None:
                self._known_git = set(entries)
                return
            new = [e for e in entries if e not in self._known_git]
        for entry in new:
            why = _quietly(git_dir_runs_program, entry)
            moved = quarantine_new_git(entry) if why is not None else None
            with self._lock:
                if moved is not None:
                    self.quarantined.append(
                        f"(A command created the git repository metadata {entry}, whose "
                        f"{why} would run a program the next time anyone runs git there, "
                        f"outside any sandbox; aistack moved it to {moved.name}.)"
                    )
                else:
                    self._known_git.add(entry)


def _quietly(check: Callable[[Path], str | None], path: Path) -> str | None:
    try:
        return check(path)
    except OSError:
        return None


def host_sockets(roots: Sequence[Path] = ()) -> list[Path]:
    """The host's bound Unix sockets outside the directories the sandbox replaces whole
    (/tmp, /run, ...) or inside a root bound back into them (a project under /tmp), from
    /proc/net/unix: each needs a mask of its own."""
    try:
        lines = Path("/proc/net/unix").read_text(errors="replace").splitlines()[1:]
    except OSError:
        return []
    out: list[Path] = []
    for line in lines:
        fields = line.split()
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue
        path = Path(fields[7])
        replaced = any(is_within(path, d) for d in _REPLACED_DIRS)
        if (replaced and not any(is_within(path, r) for r in roots)) or path in out:
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(path.lstat().st_mode):
                out.append(path)
    return out


def release_placeholders(policy: ExecPolicy, still_used: Callable[[Path], bool]) -> None:
    """Remove the empty mount points bwrap left for `policy`'s placeholders.

    Only an empty directory, or an empty regular file for a file placeholder, is removed:
    nothing else can be there, since the path was absent and the command saw it mounted.
    `still_used` says whether another running command still has it mounted.
    """
    for path in policy.placeholders:
        if still_used(path):
            continue
        with contextlib.suppress(OSError):
            st = path.lstat()
            if stat.S_ISDIR(st.st_mode):
                path.rmdir()
            elif stat.S_ISREG(st.st_mode) and st.st_size == 0 and path in policy.placeholder_files:
                path.unlink()


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """Paths not inside another one of them: a mount below a masked directory would fail."""
    ordered = sorted(dict.fromkeys(paths), key=lambda p: len(p.parts))
    out: list[Path] = []
    for path in ordered:
        if not any(is_within(path, kept) for kept in out):
            out.append(path)
    return out


def _inside_any(path: Path, tops: Sequence[Path]) -> bool:
    return any(is_within(path, top) for top in tops)
