"""Read: a file's lines, numbered like `cat -n`, or an image the model can see.

Small files are decoded whole; anything larger must be paged with offset/limit, and
paging streams line by line so a 50 MB log never sits in memory. Output is bounded in
lines, per-line width and total characters, each cut announced with the offset to go on.
When an editor lends its files (`tools/editor.py`), a text file small enough to read
whole is the editor's copy, unsaved changes included; images, binary files, notebooks
and files paged from disk are read from disk as always.
"""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from aistack_tui.beneath import Location, UnsafePath
from aistack_tui.llm.types import ImageBlock, TextBlock
from aistack_tui.permissions.targets import PathRead, PermissionTarget
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.editor import editor_failure, editor_files, is_editor_text
from aistack_tui.tools.file_target import open_target
from aistack_tui.tools.files import (
    BINARY_EXTENSIONS,
    BINARY_SNIFF_BYTES,
    IMAGE_TYPES,
    decode_bytes,
    display_path,
    looks_binary,
    numbered,
    record_read,
)
from aistack_tui.tools.notebook import parse, render
from aistack_tui.tools.schema import CompactSpec

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_WHOLE_FILE_BYTES = 256 * 1024
"""Above this a Read without offset/limit is refused rather than flooding the context."""
MAX_OUTPUT_CHARS = 200_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
"""Notebooks are shown as cells without their images, so they may be larger than text."""

_IMAGE_MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
]


class ReadArgs(ToolArgs):
    file_path: str
    offset: int | None = Field(
        default=None, ge=0, description="First line to read (1-based)"
    )
    limit: int | None = Field(default=None, ge=1, description="How many lines")


@dataclass(slots=True)
class _Page:
    lines: list[str]
    first: int
    more: bool
    total: int | None
    stopped_for_size: bool = False


def _human(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f"… [line truncated, {len(line)} chars]"


def _take(lines: list[str], limit: int) -> tuple[list[str], bool]:
    """Clip lines and stop early once the output budget is used."""
    out: list[str] = []
    used = 0
    for line in lines[:limit]:
        clipped = _clip(line)
        used += len(clipped) + 8
        if out and used > MAX_OUTPUT_CHARS:
            return out, True
        out.append(clipped)
    return out, False


def _page_small(data: bytes, first: int, limit: int) -> _Page:
    text, _ = decode_bytes(data)
    return _page_text(text, first, limit)


def _page_text(text: str, first: int, limit: int) -> _Page:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    chosen, cut = _take(lines[first - 1 :], limit)
    end = first - 1 + len(chosen)
    return _Page(chosen, first, end < len(lines), len(lines), cut)


def _page_stream(f: BinaryIO, first: int, limit: int, encoding: str) -> _Page:
    out: list[str] = []
    used = 0
    lineno = 0
    for raw in f:
        lineno += 1
        if lineno < first:
            continue
        if len(out) >= limit:
            return _Page(out, first, True, None)
        line = raw.rstrip(b"\n").rstrip(b"\r").decode(encoding, errors="replace")
        clipped = _clip(line)
        used += len(clipped) + 8
        if out and used > MAX_OUTPUT_CHARS:
            return _Page(out, first, True, None, stopped_for_size=True)
        out.append(clipped)
    return _Page(out, first, False, lineno)


def _sniff_encoding(sample: bytes) -> str:
    if sample.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as e:
        # A multi-byte character cut by the sample's end is not a sign of Latin-1.
        if e.start < len(sample) - 4:
            return "latin-1"
    return "utf-8"


def _image_type(path: Path, head: bytes) -> str:
    for magic, media in _IMAGE_MAGIC:
        if head.startswith(magic):
            return media
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return IMAGE_TYPES[path.suffix.lower()]


class ReadTool(CompactSpec, Tool[ReadArgs]):
    name = "Read"
    args_model = ReadArgs
    read_only = True

    def permission_target(self, args: ReadArgs) -> PermissionTarget:
        """Read opens this one file: the decision pins it."""
        return PathRead(args.file_path, opens=True)

    def describe(self, args: ReadArgs) -> ToolCallDisplay:
        summary = f"Read {args.file_path}"
        if args.offset or args.limit:
            start = max(args.offset or 1, 1)
            summary += f" (lines {start}-{start + (args.limit or DEFAULT_LIMIT) - 1})"
        return ToolCallDisplay(summary=summary)

    async def validate(self, args: ReadArgs, ctx: ToolContext) -> None:
        path = ctx.resolve(args.file_path)
        if not path.exists():  # an editor lends only files that exist on disk
            raise ToolError(f"File does not exist: {path}{_did_you_mean(path)}")
        if path.is_dir():
            raise ToolError(f"{path} is a directory, not a file. Use LS to list its contents.")

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        # One walk beneath the project, arriving at the file the check judged; the file is
        # opened through it (tools/file_target.py), never again by name.
        with open_target(ctx, args.file_path, done="read") as found:
            path = found.path
            files = editor_files(ctx)
            read = files.read if files is not None else None
            if read is not None and await asyncio.to_thread(_editor_may_read, path):
                try:
                    text = await read(path)
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # the disk still has it: say so and read that
                    output = await asyncio.to_thread(self._read, found, args, ctx)
                    return _with_note(output, editor_failure("read", path, e))
                return self._from_editor(text, path, args, ctx)
            return await asyncio.to_thread(self._read, found, args, ctx)

    def _from_editor(self, text: str, path: Path, args: ReadArgs, ctx: ToolContext
                     ) -> ToolOutput:
        """The editor's copy, paged and shown as a file from disk would be. The read is
        recorded against the file on disk, which is what Edit and Write check."""
        text = text.replace("\r\n", "\n")
        page = _page_text(text, max(args.offset or 1, 1), args.limit or DEFAULT_LIMIT)
        try:
            record_read(ctx, path)
        except OSError as e:
            raise ToolError(f"Cannot read {path}: {e.strerror or e}") from e
        return self._render(page, len(text), display_path(path, ctx))

    def _read(self, found: Location, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        path = found.path
        if found.kind == "missing":
            raise ToolError(f"File does not exist: {path}{_did_you_mean(path)}")
        if found.kind == "dir":
            raise ToolError(f"{path} is a directory, not a file. Use LS to list its contents.")
        try:
            f = os.fdopen(found.open_file(), "rb")
        except UnsafePath as e:
            raise ToolError(f"Cannot read {path}: {e}") from e
        except OSError as e:
            raise ToolError(f"Cannot read {path}: {e.strerror or e}") from e
        with f:
            return self._read_open(f, path, args, ctx)

    def _read_open(self, f: BinaryIO, path: Path, args: ReadArgs, ctx: ToolContext
                   ) -> ToolOutput:
        try:
            st = os.fstat(f.fileno())
            head = f.read(BINARY_SNIFF_BYTES)
            f.seek(0)
        except OSError as e:
            raise ToolError(f"Cannot read {path}: {e.strerror or e}") from e
        shown = display_path(path, ctx)

        if path.suffix.lower() in IMAGE_TYPES:
            return self._image(f, path, st, head, ctx, shown)
        if path.suffix.lower() == ".ipynb":
            return self._notebook(f, path, st, ctx, shown)
        if path.suffix.lower() in BINARY_EXTENSIONS or looks_binary(head):
            raise ToolError(
                f"{path} is a binary file ({_human(st.st_size)}); Read shows text files and "
                "images (png, jpg, gif, webp) only."
            )

        paging = args.offset is not None or args.limit is not None
        if st.st_size > MAX_WHOLE_FILE_BYTES and not paging:
            raise ToolError(
                f"{path} is {_human(st.st_size)}, too large to read at once (limit "
                f"{_human(MAX_WHOLE_FILE_BYTES)}). Read part of it with offset and limit, e.g. "
                f"offset=1, limit={DEFAULT_LIMIT}, then continue from the next offset; or use "
                "Grep to find the lines you need."
            )
        first = max(args.offset or 1, 1)
        limit = args.limit or DEFAULT_LIMIT
        try:
            if st.st_size <= MAX_WHOLE_FILE_BYTES:
                page = _page_small(f.read(), first, limit)
            else:
                page = _page_stream(f, first, limit, _sniff_encoding(head))
        except OSError as e:
            raise ToolError(f"Cannot read {path}: {e.strerror or e}") from e
        record_read(ctx, path, st)
        return self._render(page, st.st_size, shown)

    def _render(self, page: _Page, size: int, shown: str) -> ToolOutput:
        if size == 0:
            text = "(The file exists but is empty.)"
            return ToolOutput(text, display=ToolCallDisplay(summary=f"Read {shown} (empty)"))
        if not page.lines:
            total = f"only {page.total} lines" if page.total is not None else "fewer lines"
            raise ToolError(
                f"offset {page.first} is past the end of the file ({shown} has {total})."
            )
        last = page.first + len(page.lines) - 1
        body = numbered(page.lines, page.first)
        if page.more:
            of_total = f" of {page.total}" if page.total is not None else ""
            why = " (output size limit)" if page.stopped_for_size else ""
            body += (
                f"\n\n[Showing lines {page.first}-{last}{of_total}{why}. "
                f"Use offset={last + 1} to read more.]"
            )
        summary = f"Read {shown} ({len(page.lines)} lines)"
        return ToolOutput(
            body,
            display=ToolCallDisplay(
                summary=summary, detail="\n".join(page.lines), language=language_for(shown)
            ),
            metadata={"first_line": page.first, "last_line": last, "total_lines": page.total},
        )

    def _notebook(self, f: BinaryIO, path: Path, st: os.stat_result, ctx: ToolContext,
                  shown: str) -> ToolOutput:
        """The cells with the ids NotebookEdit takes (`tools/notebook.py`); images in
        outputs are named, not sent, so a notebook with plots can be read whole."""
        if st.st_size > MAX_NOTEBOOK_BYTES:
            raise ToolError(f"{path} is {_human(st.st_size)}, too large to show as cells "
                            f"(limit {_human(MAX_NOTEBOOK_BYTES)}); use Grep on it instead.")
        try:
            notebook = parse(decode_bytes(f.read())[0], shown)
        except OSError as e:
            raise ToolError(f"Cannot read {path}: {e.strerror or e}") from e
        text = render(notebook, shown)
        if len(text) > MAX_OUTPUT_CHARS:
            text = text[:MAX_OUTPUT_CHARS] + "\n[Notebook cut at the output size limit.]"
        record_read(ctx, path, st)
        return ToolOutput(text, display=ToolCallDisplay(
            summary=f"Read {shown} ({len(notebook.cells)} cells)", detail=text,
        ))

    def _image(
        self, f: BinaryIO, path: Path, st: os.stat_result, head: bytes, ctx: ToolContext,
        shown: str,
    ) -> ToolOutput:
        size = st.st_size
        if size > MAX_IMAGE_BYTES:
            raise ToolError(
                f"{path} is {_human(size)}; images over {_human(MAX_IMAGE_BYTES)} cannot be sent "
                "to the model. Resize it first (for example with ImageMagick via Bash)."
            )
        data = f.read()
        media = _image_type(path, head)
        record_read(ctx, path, st)
        return ToolOutput(
            [
                TextBlock(text=f"Image {shown} ({media}, {_human(size)})"),
                ImageBlock(media_type=media, data=base64.b64encode(data).decode("ascii")),
            ],
            display=ToolCallDisplay(summary=f"Read {shown} (image, {_human(size)})"),
        )


def _editor_may_read(path: Path) -> bool:
    """A text file on disk small enough to read whole: the editor's copy can stand in."""
    try:
        return is_editor_text(path) and path.stat().st_size <= MAX_WHOLE_FILE_BYTES
    except OSError:
        return False  # the disk read says what is wrong


def _with_note(output: ToolOutput, note: str) -> ToolOutput:
    if isinstance(output.content, str):
        output.content = f"{note}\n{output.content}"
    return output


def _did_you_mean(path: Path) -> str:
    parent = path.parent
    if not parent.is_dir():
        return ""
    try:
        names = [p.name for p in parent.iterdir()]
    except OSError:
        return ""
    stem = path.stem.lower()
    similar = sorted(n for n in names if n.lower().startswith(stem) or Path(n).stem.lower() == stem)
    return f". Did you mean {parent / similar[0]}?" if similar else ""


_LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".jsx": "jsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".rb": "ruby",
    ".sh": "bash",
    ".md": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
}


def language_for(shown: str) -> str:
    """The highlighting language of a file by its name (`a.py` → `python`)."""
    return _LANGUAGES.get(Path(shown).suffix.lower(), "")
