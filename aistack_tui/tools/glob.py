"""Glob: find files by name pattern, newest first.

ripgrep does the walking (`rg --files --glob`), so results respect `.gitignore` exactly
as the user's own searches do, and hidden files are included but `.git/` never is.
Newest-first ordering puts the files someone is working on at the top of a capped list.
Symlinks are never followed while walking, and files the session's Read check refuses
(a Read deny rule, a secrets file) are left out of the list.
"""

from __future__ import annotations

import contextlib
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
from aistack_tui.tools.process import find_rg, run_capped
from aistack_tui.tools.schema import CompactSpec
from aistack_tui.tools.visibility import read_filter

MAX_RESULTS = 100
SEARCH_TIMEOUT = 30.0
MAX_LISTING_BYTES = 4 * 1024 * 1024
_GLOB_CHARS = set("*?[{")


class GlobArgs(ToolArgs):
    pattern: str
    path: str | None = Field(
        default=None, description="Directory to search (default: working directory)"
    )


def split_pattern(pattern: str) -> tuple[str | None, str]:
    """An absolute pattern's literal leading directories, and the glob under them."""
    if not pattern.startswith(("/", "~")):
        return None, pattern
    parts = Path(pattern).parts
    literal: list[str] = []
    for part in parts[:-1]:
        if _GLOB_CHARS & set(part):
            break
        literal.append(part)
    rest = parts[len(literal) :]
    return str(Path(*literal)), "/".join(rest) if rest else "*"


def sort_newest_first(paths: list[str], base: Path) -> list[str]:
    def mtime(p: str) -> float:
        with contextlib.suppress(OSError):
            return (base / p).stat().st_mtime
        return 0.0

    return sorted(paths, key=lambda p: (-mtime(p), p))


class GlobTool(CompactSpec, Tool[GlobArgs]):
    name = "Glob"
    args_model = GlobArgs
    read_only = True

    def path_argument(self, args: GlobArgs) -> str | None:
        base, _ = split_pattern(args.pattern)
        return base or args.path

    def permission_target(self, args: GlobArgs) -> PermissionTarget:
        """The tree searched, and where the pattern climbs to (`../x/*`, `/etc/*`)."""
        return PathRead(args.path or ".", args.pattern)

    def describe(self, args: GlobArgs) -> ToolCallDisplay:
        where = f" in {args.path}" if args.path else ""
        return ToolCallDisplay(summary=f'Glob "{args.pattern}"{where}')

    async def validate(self, args: GlobArgs, ctx: ToolContext) -> None:
        base_text, _ = split_pattern(args.pattern)
        root = ctx.resolve(base_text or args.path or str(ctx.cwd))
        if not root.exists():
            raise ToolError(f"Directory does not exist: {root}")
        if not root.is_dir():
            raise ToolError(f"{root} is a file, not a directory; give a directory as path.")

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolOutput:
        await self.validate(args, ctx)
        base_text, pattern = split_pattern(args.pattern)
        root = ctx.resolve(base_text or args.path or str(ctx.cwd))
        pattern = pattern.removeprefix("./")
        argv = [
            find_rg(),
            "--no-config",
            "--files",
            "--hidden",
            "--no-follow",
            "--no-messages",
            "--glob",
            pattern,
            "--glob",
            "!.git/",
        ]
        result = await run_capped(argv, root, SEARCH_TIMEOUT, MAX_LISTING_BYTES)
        if result.returncode == 2 and not result.stdout:
            message = result.stderr.strip().removeprefix("rg: ") or "invalid pattern"
            raise ToolError(f"Invalid glob pattern {args.pattern!r}: {message}")
        visible = read_filter(ctx, root)
        found = [line for line in result.stdout.splitlines() if line and visible(root / line)]
        shown = display_path(root, ctx)
        if not found:
            return ToolOutput(
                "No files found",
                display=ToolCallDisplay(summary=f'Glob "{args.pattern}" in {shown}: no files'),
            )
        ordered = sort_newest_first(found, root)
        kept = ordered[:MAX_RESULTS]
        lines = [str(root / p) for p in kept]
        if len(found) > MAX_RESULTS or result.truncated:
            total = f"{len(found)}+" if result.truncated else str(len(found))
            lines.append(
                f"(Showing the {MAX_RESULTS} most recently modified of {total} files. "
                "Use a more specific pattern or path to narrow the results.)"
            )
        return ToolOutput(
            "\n".join(lines),
            display=ToolCallDisplay(
                summary=f'Glob "{args.pattern}" in {shown}: {len(found)} files',
                detail="\n".join(kept),
            ),
        )
