"""Grep: regex search over files with ripgrep.

The argument names mirror ripgrep's flags (`-i`, `-n`, `-A`, `-B`, `-C`) because that is
what models are trained on. Paths in the output are relative to the working directory
when the search is inside it, which keeps results short and directly usable by Read.

ripgrep never follows a symlink while walking (`--no-follow`), so a search cannot leave
the project through one. It prints each file name followed by a NUL, so every result
line is known to belong to one file, and a file the session's Read check refuses (a Read
deny rule, a secrets file) is dropped from the results whatever `glob` or `type` said.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

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
from aistack_tui.tools.glob import sort_newest_first
from aistack_tui.tools.process import find_rg, run_capped
from aistack_tui.tools.schema import CompactSpec
from aistack_tui.tools.visibility import read_filter

SEARCH_TIMEOUT = 30.0
MAX_OUTPUT_BYTES = 2 * 1024 * 1024
MAX_FILES = 200
MAX_CONTENT_LINES = 500


class GrepArgs(ToolArgs):
    pattern: str
    path: str | None = Field(
        default=None, description="File or directory to search (default: working directory)"
    )
    glob: str | None = None
    type: str | None = None
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        default="files_with_matches",
        description="content: matching lines; files_with_matches: paths, newest first; "
        "count: matches per file",
    )
    case_insensitive: bool = Field(default=False, alias="-i", description="Ignore case")
    line_numbers: bool = Field(
        default=True, alias="-n", description="Line numbers (content mode)"
    )
    after: int | None = Field(default=None, alias="-A", ge=0, description="Lines after a match")
    before: int | None = Field(default=None, alias="-B", ge=0, description="Lines before a match")
    context: int | None = Field(default=None, alias="-C", ge=0, description="Lines around a match")
    head_limit: int | None = Field(
        default=None, ge=1, description="Keep only the first N results"
    )


def _relative_target(target: Path, cwd: Path) -> str:
    try:
        rel = target.relative_to(cwd)
    except ValueError:
        return str(target)
    return str(rel) if str(rel) != "." else "."


def _strip_dot(line: str) -> str:
    return line[2:] if line.startswith("./") else line


def _visible_lines(stdout: str, args: GrepArgs, visible: Callable[[str], bool]) -> list[str]:
    """ripgrep's `--null` output as the usual `path:line` lines, hidden files left out."""
    if args.output_mode == "files_with_matches":
        return [p for p in (_strip_dot(x) for x in stdout.split("\0")) if p and visible(p)]
    out: list[str] = []
    for line in stdout.splitlines():
        path, nul, rest = line.partition("\0")
        if not nul:
            if line == "--" and out and out[-1] != "--":
                out.append(line)  # separator between context groups
            continue
        path = _strip_dot(path)
        if not visible(path):
            continue
        if args.output_mode == "count":
            out.append(f"{path}:{rest}")
            continue
        number = len(rest) - len(rest.lstrip("0123456789"))
        # A match line is `path:N:text`, a context line `path-N-text`, as without --null.
        sep = ":"
        if args.line_numbers and number and rest[number : number + 1] in (":", "-"):
            sep = rest[number]
        out.append(f"{path}{sep}{rest}")
    while out and out[-1] == "--":
        out.pop()
    return out


class GrepTool(CompactSpec, Tool[GrepArgs]):
    name = "Grep"
    args_model = GrepArgs
    read_only = True

    def permission_target(self, args: GrepArgs) -> PermissionTarget:
        """The file or tree searched."""
        return PathRead(args.path or ".")

    def describe(self, args: GrepArgs) -> ToolCallDisplay:
        summary = f'Grep "{args.pattern}"'
        if args.path:
            summary += f" in {args.path}"
        if args.glob or args.type:
            summary += f" ({args.glob or args.type})"
        return ToolCallDisplay(summary=summary)

    def _argv(self, args: GrepArgs, target: str) -> list[str]:
        argv = [
            find_rg(),
            "--no-config",
            "--hidden",
            "--no-follow",
            "--glob",
            "!.git/",
            "--color",
            "never",
            "--no-messages",
            "--null",
        ]
        if args.case_insensitive:
            argv.append("-i")
        if args.glob:
            argv += ["--glob", args.glob]
        if args.type:
            argv += ["--type", args.type]
        if args.output_mode == "files_with_matches":
            argv.append("--files-with-matches")
        elif args.output_mode == "count":
            argv += ["--count-matches", "--with-filename"]
        else:
            argv += [
                "--with-filename",
                "--no-heading",
                "--max-columns",
                "1000",
                "--max-columns-preview",
            ]
            argv.append("--line-number" if args.line_numbers else "--no-line-number")
            if args.context is not None:
                argv += ["-C", str(args.context)]
            if args.after is not None:
                argv += ["-A", str(args.after)]
            if args.before is not None:
                argv += ["-B", str(args.before)]
        return [*argv, "-e", args.pattern, "--", target]

    async def validate(self, args: GrepArgs, ctx: ToolContext) -> None:
        target_path = ctx.resolve(args.path) if args.path else ctx.cwd
        if not target_path.exists():
            raise ToolError(f"Path does not exist: {target_path}")

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        await self.validate(args, ctx)
        target_path = ctx.resolve(args.path) if args.path else ctx.cwd
        target = _relative_target(target_path, ctx.cwd)
        result = await run_capped(
            self._argv(args, target), ctx.cwd, SEARCH_TIMEOUT, MAX_OUTPUT_BYTES
        )
        if result.returncode == 2 and not result.stdout:
            raise ToolError(self._explain(result.stderr, args))
        visible = read_filter(ctx, target_path)
        lines = _visible_lines(result.stdout, args, lambda rel: visible(ctx.cwd / rel))
        shown = display_path(target_path, ctx)
        base = f'Grep "{args.pattern}" in {shown}'
        if not lines:
            return ToolOutput(
                "No matches found", display=ToolCallDisplay(summary=f"{base}: no matches")
            )
        if args.output_mode == "files_with_matches":
            lines = sort_newest_first(lines, ctx.cwd)
            return self._finish(lines, args, result.truncated, MAX_FILES, "files", base)
        if args.output_mode == "count":
            total = sum(
                int(ln.rsplit(":", 1)[1]) for ln in lines if ln.rsplit(":", 1)[-1].isdigit()
            )
            out = self._finish(lines, args, result.truncated, MAX_FILES, "files", base)
            assert isinstance(out.content, str)
            out.content += f"\n\nFound {total} matches across {len(lines)} files."
            return out
        return self._finish(lines, args, result.truncated, MAX_CONTENT_LINES, "lines", base)

    def _finish(
        self, lines: list[str], args: GrepArgs, truncated: bool, cap: int, unit: str, base: str
    ) -> ToolOutput:
        limit = min(args.head_limit or cap, cap)
        kept = lines[:limit]
        text = "\n".join(kept)
        if len(lines) > limit or truncated:
            total = f"{len(lines)}+" if truncated else str(len(lines))
            if args.head_limit and args.head_limit <= cap:
                text += f"\n\n(Showing the first {limit} of {total} {unit}; head_limit={limit}.)"
            else:
                text += (
                    f"\n\n(Showing the first {limit} of {total} {unit}. Narrow the search with "
                    "path, glob or type, or a more specific pattern.)"
                )
        summary = f"{base}: {len(lines)}{'+' if truncated else ''} {unit}"
        return ToolOutput(text, display=ToolCallDisplay(summary=summary, detail="\n".join(kept)))

    @staticmethod
    def _explain(stderr: str, args: GrepArgs) -> str:
        message = stderr.strip().removeprefix("rg: ") or "ripgrep failed"
        if "error parsing glob" in message:
            return f"Invalid glob {args.glob!r}: {message}"
        if "regex parse error" in message or "error parsing" in message:
            return (
                f"Invalid regular expression {args.pattern!r}: {message}\n"
                "Escape special characters such as ( ) [ ] { } . * + ? with a backslash to "
                "match them literally."
            )
        if "unrecognized file type" in message:
            return f'Unknown file type {args.type!r}; use glob instead, e.g. "*.ext". ({message})'
        return f"Grep failed: {message}"
