"""LS: the entries of one directory, directories first.

One level only, so the answer is predictable and small; the model descends by calling
again or uses Glob for a recursive search. `.git` is always skipped: it is large and
never what the model is looking for.
"""

from __future__ import annotations

import asyncio
import fnmatch
from pathlib import Path

from pydantic import Field

from aistack_tui.permissions.targets import PathRead, PermissionTarget
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.files import display_path
from aistack_tui.tools.schema import CompactSpec

MAX_ENTRIES = 1000
ALWAYS_SKIPPED = frozenset({".git"})


class LSArgs(ToolArgs):
    path: str
    ignore: list[str] | None = Field(
        default=None, description="Name globs to skip, e.g. node_modules, *.pyc"
    )


def _ignored(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(name + "/", p) for p in patterns)


def list_directory(root: Path, ignore: list[str]) -> tuple[list[str], int]:
    """Sorted entry names (directories with a trailing `/`) and how many exist in all."""
    try:
        entries = list(root.iterdir())
    except PermissionError as e:
        raise ToolError(f"Permission denied: cannot list {root}") from e
    dirs: list[str] = []
    files: list[str] = []
    for entry in entries:
        name = entry.name
        if name in ALWAYS_SKIPPED or _ignored(name, ignore):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            dirs.append(name + "/")
        else:
            files.append(f"{name} -> {_link_target(entry)}" if entry.is_symlink() else name)
    dirs.sort(key=str.lower)
    files.sort(key=str.lower)
    return dirs + files, len(dirs) + len(files)


def _link_target(entry: Path) -> str:
    try:
        return str(entry.readlink())
    except OSError:
        return "?"


class LSTool(CompactSpec, Tool[LSArgs]):
    name = "LS"
    args_model = LSArgs
    read_only = True

    def permission_target(self, args: LSArgs) -> PermissionTarget:
        """The directory listed."""
        return PathRead(args.path)

    def describe(self, args: LSArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"LS {args.path}")

    async def validate(self, args: LSArgs, ctx: ToolContext) -> None:
        root = ctx.resolve(args.path)
        if not root.exists():
            raise ToolError(f"Directory does not exist: {root}")
        if not root.is_dir():
            raise ToolError(f"{root} is a file, not a directory; use Read to see its content.")

    async def run(self, args: LSArgs, ctx: ToolContext) -> ToolOutput:
        await self.validate(args, ctx)
        root = ctx.resolve(args.path)
        names, total = await asyncio.to_thread(list_directory, root, args.ignore or [])
        shown = display_path(root, ctx)
        if not names:
            text = f"{root}/ is empty."
        else:
            kept = names[:MAX_ENTRIES]
            text = f"{root}/\n" + "\n".join(f"  {n}" for n in kept)
            if total > MAX_ENTRIES:
                text += (
                    f"\n\n(Showing {MAX_ENTRIES} of {total} entries. Use ignore patterns or Glob "
                    "to narrow the listing.)"
                )
        return ToolOutput(
            text,
            display=ToolCallDisplay(
                summary=f"LS {shown} ({total} entries)", detail="\n".join(names[:MAX_ENTRIES])
            ),
        )
