"""The sandbox's own directories on the host: the session's /tmp, its runtime dir, masks.

Every sandboxed command of a session sees the same private `/tmp`, `/var/tmp` and
`$XDG_RUNTIME_DIR`, so a build that writes to `/tmp` and a later command that reads it
still work, but never the host's: the host's temp and runtime directories hold other
programs' sockets (tmux, ssh-agent, an editor's server, X11, D-Bus), and a read-only bind
does not stop `connect()`. The directories live in one private (0700) directory under the
host's temp dir, removed when the session's process exits.

Masks live here too. A masked file is replaced, for the command, by a file of the same
size, modification time and executable bit whose mode denies every access: reading it
fails with EACCES instead of returning another content. So git inside the sandbox (run
with `core.checkStat=minimal`, see `GIT_SANDBOX_CONFIG`) finds a tracked `.env` unchanged
and never reads, diffs or stages the mask in place of the real file; when it must read it
(a racily clean entry), the read fails and nothing is staged.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import threading
import weakref
from pathlib import Path

# Given to git inside the sandbox through GIT_CONFIG_COUNT: compare only size, whole-second
# mtime and the executable bit, which a mask keeps, so a masked tracked file looks clean.
GIT_SANDBOX_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.checkStat", "minimal"),
    ("core.trustctime", "false"),
)


def git_config_env() -> dict[str, str]:
    """The environment variables that hand `GIT_SANDBOX_CONFIG` to every git a command runs."""
    env = {"GIT_CONFIG_COUNT": str(len(GIT_SANDBOX_CONFIG))}
    for i, (key, value) in enumerate(GIT_SANDBOX_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


class ScratchDirs:
    """The session's private directories, created on first use and removed at exit."""

    def __init__(self, parent: Path | None = None) -> None:
        self._parent = parent
        self._base: Path | None = None
        self._lock = threading.Lock()
        self._masks: dict[tuple[str, int, int, bool], Path] = {}

    @property
    def base(self) -> Path:
        with self._lock:
            if self._base is None:
                base = Path(tempfile.mkdtemp(prefix="aistack-sandbox-", dir=self._parent))
                for name in ("tmp", "run", "masks", "deny"):
                    (base / name).mkdir(mode=0o700)
                (base / "tmp").chmod(0o1777)  # programs expect a sticky, shared /tmp
                (base / "deny").chmod(0)  # an empty directory nobody can enter
                (base / "empty").mkdir(mode=0o755)
                weakref.finalize(self, _remove_tree, base)
                self._base = base
            return self._base

    @property
    def tmp(self) -> Path:
        """Bound over /tmp, /var/tmp and $TMPDIR for every command of the session."""
        return self.base / "tmp"

    @property
    def runtime(self) -> Path:
        """Bound over $XDG_RUNTIME_DIR."""
        return self.base / "run"

    @property
    def denied_dir(self) -> Path:
        """Bound over a masked directory: entering or listing it fails with EACCES."""
        return self.base / "deny"

    @property
    def empty_dir(self) -> Path:
        """Bound read-only over an absent protected path for the command's life."""
        return self.base / "empty"

    def empty_file(self) -> Path:
        """Bound read-only over an absent protected file (`~/.gitconfig`): git and shells
        read an empty file as no configuration, where a directory would stop them."""
        path = self.base / "empty-file"
        if not path.exists():
            path.touch(mode=0o444)
        return path

    def self_commondir(self) -> Path:
        """Bound over an absent `.git/commondir`: "." names the repository itself, as no
        commondir does (git refuses an empty one)."""
        path = self.base / "commondir"
        if not path.exists():
            path.write_text(".\n")
            path.chmod(0o444)
        return path

    def mask_for(self, path: Path) -> Path:
        """A file standing in for `path`: same size, mtime and executable bit, no access.

        Sparse, so a large file costs no disk. Made once per (path, size, mtime).
        """
        st = path.stat()
        executable = bool(st.st_mode & stat.S_IXUSR)
        key = (str(path), st.st_size, st.st_mtime_ns, executable)
        with self._lock:
            found = self._masks.get(key)
        if found is not None and found.exists():
            return found
        name = hashlib.sha256(repr(key).encode()).hexdigest()[:32]
        mask = self.base / "masks" / name
        with contextlib.suppress(FileNotFoundError):
            mask.chmod(0o600)
            mask.unlink()
        fd = os.open(mask, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, st.st_size)
        finally:
            os.close(fd)
        os.utime(mask, ns=(st.st_atime_ns, st.st_mtime_ns))
        mask.chmod(0o100 if executable else 0)
        with self._lock:
            self._masks[key] = mask
        return mask

    def socket_mask(self) -> Path:
        """A file bound over a host socket: connecting to it fails."""
        mask = self.base / "masks" / "socket"
        if not mask.exists():
            mask.touch(mode=0)
            mask.chmod(0)
        return mask


def _remove_tree(base: Path) -> None:
    """Remove the session's directories (the denied one first made enterable again)."""
    with contextlib.suppress(OSError):
        (base / "deny").chmod(0o700)
    shutil.rmtree(base, ignore_errors=True)
