"""Which files a search tool may show: the session's Read check, applied per file.

Grep and Glob are checked once for their `path`, but they reach every file below it. Each
file they would report is passed through `ctx.services["read_allowed"]` (the permission
engine, injected when the session is composed), so a Read deny rule or a secrets file
keeps it out of the results exactly as it keeps a direct Read out. Without an engine
(a tool used on its own) secrets files are still left out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aistack_tui.permissions.access import READ_ALLOWED
from aistack_tui.permissions.paths import is_secret
from aistack_tui.tools.base import ToolContext


def read_filter(ctx: ToolContext) -> Callable[[Path], bool]:
    """A checker for one tool call (answers are cached for the call's duration)."""
    allowed: Any = ctx.services.get(READ_ALLOWED)
    seen: dict[Path, bool] = {}

    def visible(path: Path) -> bool:
        known = seen.get(path)
        if known is not None:
            return known
        try:
            ok = bool(allowed(path)) if allowed is not None else not is_secret(path.resolve())
        except Exception:  # fail closed: an error must not show the file
            ok = False
        seen[path] = ok
        return ok

    return visible
