"""Completion sources for every front end's prompt: `/commands` and `@path` mentions.

Pure functions and one small file index, so they are tested without a terminal. The file
index walks the project once (lazily, capped) and skips what `.gitignore` ignores, using
`pathspec`'s git-wildmatch rules, the same semantics git applies.

`@server:uri` mentions an MCP server's resource, as in Claude Code. The index offers them
next to the files when it is given a source of them (`FileIndex.resources`: the session's
resources, read when completing, since servers connect after the prompt appears); the
session reads the mentioned ones and attaches them (`session/mcp_view.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pathspec

from aistack_tui.llm.types import ContentBlock, TextBlock

MAX_FILES = 20_000
ALWAYS_SKIPPED = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache"}
MENTION = re.compile(r"(?:^|\s)@([^\s@]*)$")
ATTACHED = re.compile(r"(?:^|\s)@([^\s@]+)")
RESOURCE = re.compile(r"^([A-Za-z0-9_-]+):(\S+)$")


@dataclass(frozen=True, slots=True)
class Completion:
    """One candidate: `value` replaces the token being typed; `help` is shown beside it."""

    value: str
    help: str = ""


def _load_spec(root: Path, directory: Path) -> pathspec.PathSpec | None:
    lines: list[str] = []
    ignore = directory / ".gitignore"
    if ignore.is_file():
        try:
            lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
    if directory == root:
        exclude = root / ".git" / "info" / "exclude"
        if exclude.is_file():
            lines += exclude.read_text(encoding="utf-8", errors="replace").splitlines()
    if not lines:
        return None
    return pathspec.PathSpec.from_lines("gitwildmatch", lines)


class FileIndex:
    """Project files (relative, `/`-separated, directories end in `/`), honouring
    `.gitignore` files at every level."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[str] | None = None
        self.resources: Callable[[], list[str]] | None = None
        """`server:uri` of the MCP resources to offer too, when the session has some."""

    def invalidate(self) -> None:
        self._files = None

    @property
    def files(self) -> list[str]:
        if self._files is None:
            self._files = self._walk()
        return self._files

    def _walk(self) -> list[str]:
        found: list[str] = []
        specs: list[tuple[str, pathspec.PathSpec]] = []  # (dir prefix, spec)

        def ignored(rel: str) -> bool:
            for prefix, spec in specs:
                if rel.startswith(prefix) and spec.match_file(rel[len(prefix) :]):
                    return True
            return False

        for dirpath, dirnames, filenames in os.walk(self.root):
            here = Path(dirpath)
            rel_dir = here.relative_to(self.root).as_posix()
            prefix = "" if rel_dir == "." else rel_dir + "/"
            spec = _load_spec(self.root, here)
            if spec is not None:
                specs.append((prefix, spec))
            kept: list[str] = []
            for name in sorted(dirnames):
                rel = prefix + name + "/"
                if name in ALWAYS_SKIPPED or ignored(rel):
                    continue
                kept.append(name)
                found.append(rel)
            dirnames[:] = kept
            for name in sorted(filenames):
                rel = prefix + name
                if not ignored(rel):
                    found.append(rel)
            if len(found) >= MAX_FILES:
                break
        return found[:MAX_FILES]

    def matches(self, query: str, limit: int = 12) -> list[str]:
        """Paths that contain `query`'s characters in order, best first."""
        scored: list[tuple[float, str]] = []
        q = query.lower()
        for path in self.files:
            score = fuzzy_score(q, path.lower())
            if score is not None:
                # Files first: a mention usually attaches a file; directories are steps.
                scored.append((score + (0.5 if path.endswith("/") else 0.0), path))
        for resource in self.resources() if self.resources is not None else []:
            score = fuzzy_score(q, resource.lower())
            if score is not None:
                scored.append((score + 0.25, resource))
        scored.sort(key=lambda item: (item[0], len(item[1]), item[1]))
        return [path for _, path in scored[:limit]]


def fuzzy_score(query: str, candidate: str) -> float | None:
    """Lower is better; None when `query` is not a subsequence of `candidate`.

    A contiguous hit in the base name beats one in the directories, which beats scattered
    characters: what a user typing `@app` expects to see first is `src/app.py`.
    """
    if not query:
        return float(candidate.count("/"))
    base = candidate.rstrip("/").rsplit("/", 1)[-1]
    if base.startswith(query):
        return 0.0 + len(base) / 100
    if query in base:
        return 1.0 + len(base) / 100
    if query in candidate:
        return 2.0 + candidate.index(query) / 100
    pos = -1
    gaps = 0
    for ch in query:
        nxt = candidate.find(ch, pos + 1)
        if nxt < 0:
            return None
        gaps += nxt - pos - 1
        pos = nxt
    return 3.0 + gaps / 10


def mention_at_end(text_before_cursor: str) -> str | None:
    """The partial `@path` being typed at the cursor, if any."""
    match = MENTION.search(text_before_cursor)
    return match.group(1) if match else None


def command_at_start(text: str) -> str | None:
    """The partial `/command` when the prompt is a single slash word being typed."""
    if text.startswith("/") and " " not in text and "\n" not in text:
        return text[1:]
    return None


def mentioned_paths(text: str, root: Path) -> list[Path]:
    """Files `@mentioned` in a prompt that exist under `root`, in order, without repeats."""
    paths: list[Path] = []
    for raw in ATTACHED.findall(text):
        candidate = (root / raw.rstrip(".,;:!?)")).resolve()
        inside = candidate.is_relative_to(root.resolve())
        if inside and candidate.is_file() and candidate not in paths:
            paths.append(candidate)
    return paths


MAX_ATTACH_BYTES = 200_000
"""An @-mentioned file is cut here: a mention must not fill the context window alone."""


def attachment(path: Path, root: Path) -> str:
    """An @-mentioned file as the block the model reads (cut when very large)."""
    rel = path.relative_to(root.resolve()).as_posix()
    try:
        data = path.read_bytes()[:MAX_ATTACH_BYTES]
    except OSError as e:
        return f'<attached-file path="{rel}" error="{e.strerror}"/>'
    text = data.decode("utf-8", errors="replace").rstrip("\n")
    return f'<attached-file path="{rel}">\n{text}\n</attached-file>'


def prompt_blocks(text: str, root: Path) -> list[ContentBlock]:
    """The prompt and a block for each existing file it @-mentions, in every front end
    the same way."""
    blocks: list[ContentBlock] = [TextBlock(text=text)]
    for path in mentioned_paths(text, root):
        blocks.append(TextBlock(text=attachment(path, root)))
    return blocks


def mentioned_resources(text: str, servers: set[str]) -> list[tuple[str, str]]:
    """(server, uri) of each `@server:uri` in a prompt whose server is one of `servers`,
    in order, without repeats."""
    found: list[tuple[str, str]] = []
    for raw in ATTACHED.findall(text):
        match = RESOURCE.match(raw.rstrip(".,;!?)"))
        if match is None or match.group(1) not in servers:
            continue
        pair = (match.group(1), match.group(2))
        if pair not in found:
            found.append(pair)
    return found


def resource_attachment(server: str, uri: str, text: str, error: str = "") -> str:
    """A mentioned resource as the block the model reads (cut like a file)."""
    if error:
        return f'<attached-resource server="{server}" uri="{uri}" error="{error}"/>'
    return (f'<attached-resource server="{server}" uri="{uri}">\n'
            f"{text[:MAX_ATTACH_BYTES]}\n</attached-resource>")
