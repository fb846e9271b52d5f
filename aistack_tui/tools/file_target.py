"""The file a file tool changes: resolved once, beneath its root, and the one that was checked.

Write, Edit and MultiEdit used to resolve their path by name when they ran, after the
permission check had resolved it by name too. Calls in one batch run concurrently, so a
Bash call beside them could swap the path for a symlink in between and the write landed
wherever the link pointed (`~/.gitconfig`, `.git/config`, a user skill). Now a call's path
is walked once with `aistack_tui.beneath` (directory descriptors, no symlink out of the
project or an added directory is followed), the walk must arrive at the very file the
permission check judged (`checked_path`, set by the tool runner), and the change is read
and written through the descriptors of that walk, so nothing can be swapped after it.
Read opens its file the same way, so a read cannot be turned into one of a denied file.
"""

from __future__ import annotations

import os
from pathlib import Path

from aistack_tui.beneath import Location, UnsafePath, locate_path, real_dir
from aistack_tui.tools.base import ToolContext, ToolError, checked_path


def roots(ctx: ToolContext) -> list[Path]:
    """Where file tools resolve beneath: the project and the added directories."""
    return [real_dir(ctx.project_root), *(real_dir(d) for d in ctx.additional_directories)]


def written_path(ctx: ToolContext, raw: str) -> Path:
    """`raw` as an absolute path, `~` expanded, joined to the real cwd; not resolved."""
    path = Path(raw).expanduser()
    return path if path.is_absolute() else real_dir(ctx.cwd) / path


def _root_for(path: Path, allowed: list[Path]) -> Path:
    """The root `path` is walked beneath: the allowed root it is written under, also once
    its `..` are collapsed; else `/` (a path outside, or `../x` climbing out, which the
    permission check judged by its real name and the walk must arrive at)."""
    collapsed = Path(os.path.normpath(path))
    for root in allowed:
        if _under(path, root) and _under(collapsed, root):
            return root
    return Path("/")


def _under(path: Path, root: Path) -> bool:
    return path.parts[: len(root.parts)] == root.parts


def open_target(ctx: ToolContext, raw: str, *, done: str = "written") -> Location:
    """Walk `raw` beneath the root it is written under (the whole file system for a path
    outside the project and the added directories, which the permission check asked
    about by its real name) and check it arrives at the checked file; the caller closes
    the Location. Raises ToolError saying what changed and that nothing was `done`."""
    path = written_path(ctx, raw)
    root = _root_for(path, roots(ctx))
    try:
        found = locate_path(path, [root])
    except UnsafePath as e:
        raise ToolError(
            f"{raw} was refused: {e}. File tools resolve a path beneath the project (or an "
            f"added directory) and never follow a symlink out of it; nothing was {done}. "
            "If the file outside is really the one meant, name its real path."
        ) from e
    except NotADirectoryError as e:
        raise ToolError(f"{raw}: {e.filename} is not a directory.") from e
    except OSError as e:
        raise ToolError(f"Cannot resolve {raw}: {e.strerror or e}") from e
    checked = checked_path.get()
    if checked is not None and found.path != checked:
        found.close()
        raise ToolError(
            f"{raw} changed while the call waited: it now leads to {found.path}, not to "
            f"{checked} that was allowed; nothing was {done}. Check what changed it "
            "(a command running at the same time?) before trying again."
        )
    return found
