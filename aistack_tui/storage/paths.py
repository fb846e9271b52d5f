"""Where aistack keeps its data: the home directory, the user database, per-project dirs.

Everything lives under one home (`$AISTACK_HOME`, default `~/.aistack`) so tests and
users can relocate all state with a single variable. Per-project data (the code index)
goes under `projects/<slug>/`, where the slug is readable (the directory name) and unique
(a short hash of the resolved path), so two checkouts both called `app` never collide.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

DATABASE_NAME = "aistack.db"
_SLUG_NAME_MAX = 40
_SLUG_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def aistack_home(env: Mapping[str, str] = os.environ) -> Path:
    """`$AISTACK_HOME` if set (with `~` expanded), else `~/.aistack`."""
    raw = env.get("AISTACK_HOME", "").strip()
    if raw:
        return Path(raw).expanduser()
    return Path.home() / ".aistack"


def database_path(home: Path) -> Path:
    """The per-user database holding sessions and memory."""
    return home / DATABASE_NAME


def project_slug(project_root: Path) -> str:
    """`<name>-<hash10>`: the directory name made filesystem-safe plus a path hash.

    The hash is of the resolved path, so `./app` and `/abs/path/app` map to one slug.
    """
    resolved = project_root.expanduser().resolve()
    name = _SLUG_UNSAFE.sub("-", resolved.name.lower()).strip("-.")[:_SLUG_NAME_MAX]
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{name or 'root'}-{digest}"


def project_data_dir(home: Path, project_root: Path) -> Path:
    """The directory holding one project's own databases (e.g. its code index)."""
    return home / "projects" / project_slug(project_root)


def find_project_root(cwd: Path) -> Path:
    """The nearest enclosing directory containing `.git` (a dir, or a file for worktrees
    and submodules); `cwd` itself (resolved) when there is none."""
    start = cwd.expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start
