"""Reading skill and command files beneath the root they belong to.

A project's `.claude/skills/x/SKILL.md` or `.claude/commands/x.md` is committed, untrusted
input that reaches the model (a skill's body, a command's prompt) and may pre-approve
tools. A link in it must not pull in a file from elsewhere (`SKILL.md -> /proc/self/environ`
sends the environment, `-> ~/.ssh/id_rsa` a key). So each location has a root (the
project for project locations, the user's home for `~/.agents` and `~/.claude`, the
aistack home for `$AISTACK_HOME/...`, the folder itself for bundled skills), and its
files are walked beneath that root with `aistack_tui.beneath`: links that stay inside are
followed, links that leave are refused with a problem that names the file; only regular
files are read, up to `MAX_FILE_BYTES`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from aistack_tui.beneath import UnsafePath, iter_entries, read_beneath, real_dir

MAX_FILE_BYTES = 512 * 1024
"""A SKILL.md or command file above this is refused: it is instructions, not data."""


class RefusedFile(ValueError):
    """A file that is not read: it leaves its root, is not a regular file, or is too big."""


def location_root(label: str, folder: Path) -> Path:
    """The directory the files of location (`label`, `folder`) are read beneath.

    Derived from the label, so every caller that walks the same locations (the session,
    the trust gate) reads the same files."""
    if label == "bundled":
        return folder
    if label == "user":  # $AISTACK_HOME/skills, $AISTACK_HOME/commands
        return folder.parent
    return folder.parent.parent  # <project or ~>/.claude/skills, .agents/skills, ...


def _real(path: Path, root: Path) -> tuple[Path, Path]:
    """(`path` under the real root, the real root): the walk compares components."""
    base = real_dir(root)
    return base / path.relative_to(root), base


def read_text(path: Path, root: Path) -> str:
    """The UTF-8 text of `path` (below `root`), read beneath `root`; raises RefusedFile,
    or OSError/UnicodeDecodeError as reading any file does."""
    real_path, base = _real(path, root)
    try:
        data = read_beneath(real_path, [base], MAX_FILE_BYTES + 1)
    except UnsafePath as e:
        raise RefusedFile(f"{path}: not loaded: {e} (read only beneath {root})") from e
    if len(data) > MAX_FILE_BYTES:
        raise RefusedFile(f"{path}: not loaded: larger than {MAX_FILE_BYTES} bytes")
    return data.decode("utf-8")


def entries(folder: Path, root: Path) -> Iterator[tuple[str, str]]:
    """(name, kind) of `folder`'s entries, the folder resolved beneath `root`; nothing when
    the folder is missing or leaves the root. kind: "file", "dir", "symlink", "other"."""
    real_folder, base = _real(folder, root)
    yield from iter_entries(real_folder, [base])
