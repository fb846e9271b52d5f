"""Files opened beneath a root, race-free: what `openat2(RESOLVE_BENEATH)` promises, in Python.

Whatever the model can write (a file, a symlink, a directory swapped for a link) is
untrusted input to every later step aistack takes outside the sandbox. A path checked as a
string and opened again later by name can be changed in between: a command looping
`ln -sfn ~/.gitconfig x` beside a `Write x` turns the write into one outside the project.
So a path is walked here once, component by component, each directory opened with
`O_NOFOLLOW` relative to the one before (`dir_fd`), and the file is then read or written
through the last directory's descriptor, never by name again:

- a symlink is followed only by this walk, and only while its target stays beneath the
  root (`..` above the root and links that leave it are refused, as with RESOLVE_BENEATH;
  `/proc` magic links are outside every root); `follow=False` refuses every symlink on the
  way, for callers (undo) that must never follow one;
- a write makes its temporary file inside the held directory and renames it over the final
  name with `src_dir_fd`/`dst_dir_fd`: a symlink planted there after the walk is replaced,
  not followed, and a directory swapped for a link after the walk changes nothing, because
  the descriptor still names the directory that was walked;
- a read opens the final name with `O_NOFOLLOW` relative to the held directory and takes
  only regular files (a FIFO or a device is refused, not waited on).

`Location.path` is the real path the walk arrived at, so a caller can compare it with the
path its permission check judged and refuse when they differ. Linux and macOS (`O_PATH`
where the platform has it); this module imports nothing from aistack.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_SYMLINKS = 40
"""The kernel's own limit on links followed in one resolution (ELOOP beyond it)."""

_O_PATH: int = getattr(os, "O_PATH", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC | (0 if _O_PATH else os.O_RDONLY)


class UnsafePath(OSError):
    """A path that leaves its root (through `..` or a symlink), crosses a refused symlink,
    or names something that is not a regular file; the message says which component."""


@dataclass(slots=True)
class Location:
    """Where a walk arrived: the held directories from the root down, and the final name.

    `missing` are directories below the last held one that do not exist yet (a write
    creates them); `kind` is what the final name is now: "file", "dir", "symlink" (only
    with `follow=False`), "other" or "missing".
    """

    root: Path
    names: list[str]
    fds: list[int]
    missing: list[str]
    name: str
    kind: str
    _closed: bool = field(default=False, repr=False)

    @property
    def path(self) -> Path:
        """The real path of the final name, as the walk found it."""
        return self.root.joinpath(*self.names, *self.missing, self.name)

    @property
    def dir_fd(self) -> int:
        """The deepest directory held (the parent of `name` when nothing is missing)."""
        return self.fds[-1]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            for fd in self.fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def stat(self) -> os.stat_result | None:
        """The final name's own status (a symlink is not followed); None if absent."""
        if self.missing:
            return None
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def open_file(self) -> int:
        """A read-only descriptor of the final name, which must be a regular file (opened
        without following a symlink and without waiting on a FIFO); the caller closes it."""
        if self.missing:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(self.path))
        try:
            fd = os.open(
                self.name, os.O_RDONLY | os.O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC,
                dir_fd=self.dir_fd,
            )
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise UnsafePath(f"{self.path} is a symlink; it is not followed") from e
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnsafePath(f"{self.path} is not a regular file")
            if _O_NONBLOCK:  # only there for the open: reads of a file never block anyway
                os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, max_bytes: int | None = None) -> bytes:
        """The final name's bytes (at most `max_bytes`); only a regular file is read."""
        fd = self.open_file()
        try:
            chunks: list[bytes] = []
            left = max_bytes if max_bytes is not None else -1
            while left != 0:
                chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                if left > 0:
                    left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def make_dirs(self) -> int:
        """Create the missing directories (never through a symlink); the parent's fd."""
        while self.missing:
            part = self.missing[0]
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=self.dir_fd)
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=self.dir_fd)
            except OSError as e:
                raise UnsafePath(
                    f"{self.root.joinpath(*self.names, part)} changed while it was being "
                    "created (it is not a plain directory)"
                ) from e
            self.fds.append(fd)
            self.names.append(self.missing.pop(0))
        return self.dir_fd

    def write(self, data: bytes, *, executable: bool | None = None) -> None:
        """Replace the final name with `data` atomically, through the held directory.

        An existing regular file's permission bits are kept, a new file gets 0o666 less
        the umask; `executable` then sets or clears the execute bits. Whatever the final
        name is by then (a file, or a symlink planted since the walk) is replaced, never
        followed.
        """
        parent = self.make_dirs()
        current = self.stat()
        if current is not None and stat.S_ISREG(current.st_mode):
            mode = current.st_mode & 0o7777
        else:
            mode = 0o666 & ~_umask()
        if executable is not None:
            mode = mode | 0o111 if executable else mode & ~0o111
        tmp = _temp_name(self.name)
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC, 0o600,
            dir_fd=parent,
        )
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
            os.rename(tmp, self.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
        self.kind = "file"

    def symlink(self, target: str) -> None:
        """Make the final name a symlink to `target` (replacing what is there)."""
        parent = self.make_dirs()
        tmp = _temp_name(self.name)
        os.symlink(target, tmp, dir_fd=parent)
        try:
            os.rename(tmp, self.name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
        self.kind = "symlink"

    def remove(self) -> bool:
        """Delete the final name (a directory with its contents, a symlink itself, never
        its target); False when there was nothing to delete."""
        if self.missing:
            return False
        current = self.stat()
        if current is None:
            return False
        if stat.S_ISDIR(current.st_mode):
            # rmtree with dir_fd walks by descriptors and never follows a symlink.
            shutil.rmtree(self.name, dir_fd=self.dir_fd)
        else:
            os.unlink(self.name, dir_fd=self.dir_fd)
        self.kind = "missing"
        return True

    def prune_empty_parents(self) -> None:
        """Remove the held directories left empty, bottom up, never the root itself."""
        while len(self.fds) > 1:
            name = self.names[-1]
            try:
                os.rmdir(name, dir_fd=self.fds[-2])
            except OSError:
                return
            os.close(self.fds.pop())
            self.names.pop()

    def __enter__(self) -> Location:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def locate(root: Path, relative: Sequence[str], *, follow: bool = True) -> Location:
    """Walk `relative` (path components) beneath `root`, an absolute real directory.

    Raises UnsafePath when the walk would leave `root` or (with `follow=False`) meets a
    symlink, NotADirectoryError when a component on the way is a file, FileNotFoundError
    when `root` itself is missing. The caller closes the returned Location.
    """
    parts = _steps(relative)
    if not parts:
        raise UnsafePath(f"{root} is the root itself, not a file beneath it")
    fds = [os.open(str(root), _DIR_FLAGS & ~os.O_NOFOLLOW)]
    names: list[str] = []
    pending = list(parts)
    links = 0
    try:
        while True:
            part = pending.pop(0)
            if part == "..":
                if not names:
                    raise UnsafePath(f"'..' in {_joined(parts)} leaves {root}")
                os.close(fds.pop())
                names.pop()
                if not pending:
                    raise IsADirectoryError(
                        errno.EISDIR, "Is a directory", str(root.joinpath(*names))
                    )
                continue
            last = not pending
            here = root.joinpath(*names, part)
            try:
                st = os.stat(part, dir_fd=fds[-1], follow_symlinks=False)
            except FileNotFoundError:
                if last:
                    return Location(root, names, fds, [], part, "missing")
                if ".." in pending:
                    raise UnsafePath(
                        f"{_joined(parts)} goes up ('..') from {here}, which does not exist"
                    ) from None
                return Location(
                    root, names, fds, [part, *pending[:-1]], pending[-1], "missing"
                )
            if stat.S_ISLNK(st.st_mode):
                if not follow:
                    if last:
                        return Location(root, names, fds, [], part, "symlink")
                    raise UnsafePath(f"{here} is a symlink; it is not followed")
                links += 1
                if links > MAX_SYMLINKS:
                    raise UnsafePath(f"too many symlinks resolving {_joined(parts)}")
                target = os.readlink(part, dir_fd=fds[-1])
                if os.path.isabs(target):
                    inside = _beneath(Path(target), root)
                    if inside is None:
                        raise UnsafePath(f"{here} is a symlink to {target}, outside {root}")
                    for fd in fds[1:]:
                        os.close(fd)
                    del fds[1:]
                    names.clear()
                    pending[:0] = _steps(inside)
                else:
                    pending[:0] = _steps(target.split("/"))
                if not pending:
                    raise UnsafePath(f"{here} is a symlink to a directory, not a file")
                continue
            if last:
                kind = "file" if stat.S_ISREG(st.st_mode) else (
                    "dir" if stat.S_ISDIR(st.st_mode) else "other")
                return Location(root, names, fds, [], part, kind)
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(here))
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=fds[-1])
            except OSError as e:
                # Swapped for a symlink (or removed) between the stat and the open.
                raise UnsafePath(f"{here} changed while it was being resolved") from e
            fds.append(fd)
            names.append(part)
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise


def locate_path(path: Path, roots: Sequence[Path], *, follow: bool = True) -> Location:
    """Walk absolute `path` beneath the first of `roots` (absolute real directories) it is
    written under; `path` is not normalised first, so its `..` and links are the walk's.

    A path under none of the roots raises UnsafePath."""
    for root in roots:
        inside = _beneath(path, root)
        if inside is not None:
            return locate(root, inside, follow=follow)
    shown = ", ".join(str(r) for r in roots)
    raise UnsafePath(f"{path} is not beneath {shown}")


def read_beneath(path: Path, roots: Sequence[Path], max_bytes: int | None = None) -> bytes:
    """The bytes of regular file `path`, resolved beneath one of `roots`."""
    with locate_path(path, roots) as found:
        return found.read(max_bytes)


def real_dir(path: Path) -> Path:
    """A configured root (project, home, AISTACK_HOME) as walks need it: absolute and
    symlink-free. Roots are the user's choice, so their own links are followed once."""
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def iter_entries(directory: Path, roots: Sequence[Path]) -> Iterator[tuple[str, str]]:
    """(name, kind) of each entry of `directory` (one of `roots` or resolved beneath one),
    sorted, without following the entries themselves: kind is "file", "dir", "symlink" or
    "other". Nothing when the directory is missing or cannot be reached beneath a root."""
    try:
        fd = _open_listable(directory, roots)
    except OSError:
        return
    try:
        names = sorted(os.listdir(fd))
        for name in names:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            yield name, _kind(st.st_mode)
    finally:
        os.close(fd)


def _open_listable(directory: Path, roots: Sequence[Path]) -> int:
    """A readable descriptor of `directory`, reached by a walk beneath `roots`."""
    listable = os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC
    if directory in roots:
        return os.open(str(directory), listable)
    with locate_path(directory, roots) as found:
        if found.kind != "dir":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(directory))
        return os.open(found.name, listable | os.O_NOFOLLOW, dir_fd=found.dir_fd)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISREG(mode):
        return "file"
    return "dir" if stat.S_ISDIR(mode) else "other"


def _beneath(path: Path, root: Path) -> tuple[str, ...] | None:
    """`path`'s components below `root`, compared as written; None when not below it."""
    parts, root_parts = path.parts, root.parts
    if parts[: len(root_parts)] != root_parts:
        return None
    return parts[len(root_parts):]


def _steps(parts: Sequence[str]) -> list[str]:
    """The components a walk takes (`""` and `.` are no steps)."""
    return [p for p in parts if p not in ("", ".")]


def _joined(parts: Sequence[str]) -> str:
    return "/".join(parts)


def _temp_name(name: str) -> str:
    # Dot-prefixed and unique, short enough for NAME_MAX whatever the final name's length.
    return f".{name[:60]}.{secrets.token_hex(4)}.tmp"


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
