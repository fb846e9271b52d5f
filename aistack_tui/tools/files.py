"""File helpers shared by Read, Write, Edit and MultiEdit.

Two promises live here. First, a file is written back the way it was found: its line
endings (LF or CRLF) and encoding (UTF-8, UTF-8 with BOM, or Latin-1 for bytes that are
not UTF-8) survive an edit, so a one-line change never rewrites the whole file in a
diff. Second, the agent never overwrites what it has not seen: Write and Edit require a
Read in this session and refuse when the file's mtime or size changed since (a user, a
formatter or another tool touched it), because the model's idea of the content is stale.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.beneath import Location, UnsafePath
from aistack_tui.tools.base import FileReadRecord, ToolContext, ToolError

BINARY_SNIFF_BYTES = 8192
UTF8_BOM = b"\xef\xbb\xbf"

IMAGE_TYPES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}

BINARY_EXTENSIONS = frozenset(
    [
        ".pdf",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".7z",
        ".rar",
        ".tar",
        ".jar",
        ".war",
        ".whl",
        ".exe",
        ".dll",
        ".so",
        ".dylib",
        ".o",
        ".a",
        ".lib",
        ".class",
        ".pyc",
        ".pyo",
        ".bin",
        ".dat",
        ".db",
        ".sqlite",
        ".sqlite3",
        ".ico",
        ".bmp",
        ".tiff",
        ".mp3",
        ".mp4",
        ".mov",
        ".avi",
        ".mkv",
        ".wav",
        ".flac",
        ".ogg",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".eot",
        ".psd",
        ".xls",
        ".xlsx",
        ".doc",
        ".docx",
        ".ppt",
        ".pptx",
        ".iso",
        ".dmg",
        ".img",
    ]
)


@dataclass(slots=True)
class TextFile:
    """A decoded text file: `text` always uses `\\n`; `newline` is what the disk uses."""

    text: str
    encoding: str
    newline: str

    def encode(self, text: str, path: Path) -> bytes:
        """`text` (with `\\n` line endings) in this file's line endings and encoding."""
        if self.newline == "\r\n":
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError as e:
            bad = text[e.start : e.end]
            raise ToolError(
                f"{path} is {self.encoding}-encoded and the new text contains characters "
                f"that encoding cannot represent ({bad!r}). Use only characters the file's "
                "encoding supports, or rewrite the whole file with Write."
            ) from e


def looks_binary(sample: bytes) -> bool:
    return b"\x00" in sample


def detect_newline(text: str) -> str:
    """CRLF only when every line break in the file is CRLF; mixed files are left raw."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf == text.count("\n") else "\n"


def decode_bytes(data: bytes) -> tuple[str, str]:
    """(text, encoding) with encoding one of utf-8-sig, utf-8, latin-1."""
    if data.startswith(UTF8_BOM):
        return data.decode("utf-8-sig", errors="replace"), "utf-8-sig"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        # Latin-1 maps every byte, so a legacy file round-trips byte for byte.
        return data.decode("latin-1"), "latin-1"


def decode_text_file(data: bytes) -> TextFile:
    text, encoding = decode_bytes(data)
    newline = detect_newline(text)
    if newline == "\r\n":
        text = text.replace("\r\n", "\n")
    return TextFile(text=text, encoding=encoding, newline=newline)


def load_text_file(found: Location) -> TextFile:
    """The file a walk arrived at, decoded for editing; refuses binary files. Read through
    the walk's directory, so it is the file that was checked, not whatever has the name now."""
    try:
        data = found.read()
    except UnsafePath as e:
        raise ToolError(f"Cannot read {found.path}: {e}") from e
    except OSError as e:
        raise ToolError(f"Cannot read {found.path}: {e.strerror or e}") from e
    if looks_binary(data[:BINARY_SNIFF_BYTES]):
        raise ToolError(f"{found.path} is a binary file; it cannot be edited as text.")
    return decode_text_file(data)


def record_read(ctx: ToolContext, path: Path, st: os.stat_result | None = None) -> None:
    """Remember the file's state as the model now knows it (`st`: already taken)."""
    st = st if st is not None else path.stat()
    ctx.read_files[path] = FileReadRecord(mtime_ns=st.st_mtime_ns, size=st.st_size)


def ensure_fresh(ctx: ToolContext, path: Path, st: os.stat_result | None) -> None:
    """Raise unless `path` was Read in this session and has not changed since (`st`: its
    status now, taken through the walk that found it; None when it is gone)."""
    record = ctx.read_files.get(path)
    if record is None:
        raise ToolError(
            f"{path} has not been read in this session. Read it first, then retry, so the "
            "change is based on its current content."
        )
    if st is None:
        raise ToolError(f"{path} no longer exists (it was deleted after it was read).")
    if st.st_mtime_ns != record.mtime_ns or st.st_size != record.size:
        raise ToolError(
            f"{path} has been modified since it was read (by the user, a formatter or "
            "another tool). Read it again, then retry the change."
        )


def display_path(path: Path, ctx: ToolContext) -> str:
    """`path` as a person reads it: relative to cwd or project when inside, `~` for home."""
    for base in (ctx.cwd, ctx.project_root):
        with contextlib.suppress(ValueError):
            rel = path.relative_to(base)
            return str(rel) if str(rel) != "." else "."
    with contextlib.suppress(ValueError):
        return "~/" + str(path.relative_to(ctx.home))
    return str(path)


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def numbered(lines: list[str], first: int) -> str:
    """`cat -n` style: right-aligned line number, a tab, the line."""
    return "\n".join(f"{first + i:>6}\t{line}" for i, line in enumerate(lines))


def snippet_around(text: str, start_line: int, end_line: int, context: int = 3) -> str:
    """Numbered lines `start_line..end_line` (1-based) plus `context` on each side."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    lo = max(1, start_line - context)
    hi = min(len(lines), end_line + context)
    return numbered(lines[lo - 1 : hi], lo)
