"""Which files a search tool may show: the session's Read check, applied per file.

Grep and Glob are checked once for their `path`, but they reach every file below it. Each
file they would report is checked with `ctx.services.read_behavior` (the permission
engine, injected when the session is composed): a file is shown when a Read of it would
be allowed, or would ask for no other reason than the searched directory did (the user
approved searching a directory outside the project). A Read deny rule, an ask rule and a
secrets file keep a file out of the results as they keep a direct Read from running
unasked. Without an engine (a tool used on its own) secrets files are still left out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aistack_tui.permissions.paths import is_secret
from aistack_tui.tools.base import ToolContext


def read_filter(ctx: ToolContext, root: Path) -> Callable[[Path], bool]:
    """A checker for one call searching below `root` (answers cached for the call)."""
    behavior = ctx.services.read_behavior
    root_behavior = _safe(behavior, root) if behavior is not None else "allow"
    seen: dict[Path, bool] = {}

    def visible(path: Path) -> bool:
        known = seen.get(path)
        if known is not None:
            return known
        if behavior is None:
            ok = not _secret(path)
        else:
            answer = _safe(behavior, path)
            ok = answer == "allow" or (
                answer == "ask" and root_behavior == "ask" and not _secret(path)
            )
        seen[path] = ok
        return ok

    return visible


def _safe(behavior: Any, path: Path) -> str:
    try:
        return str(behavior(path))
    except Exception:  # fail closed: an error must not show the file
        return "deny"


def _secret(path: Path) -> bool:
    try:
        return is_secret(path.resolve())
    except (OSError, RuntimeError):
        return True
