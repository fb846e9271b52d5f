"""Cut a file into syntax-aware chunks: one definition per chunk, large ones split.

A chunk is what search returns and what the injector pastes into the prompt, so it should
be a whole thought: a function with its decorators, a small class with its methods.
A definition longer than `MAX_CHUNK_LINES` is replaced by its children (methods) plus the
lines between them (the class header, its docstring and attributes); one without
children is cut into windows. Lines outside any definition (imports, module constants,
script code) become their own windows, so nothing in the file is unsearchable.

`build_chunks` and `window_chunks` are `build_chunks_py` and `window_chunks_py` compiled
(`_chunks.c`, in the `_words` extension) where the install could build it: the Python
chunker was 0.7 of the 8.5 CPU-s of extracting a generated 10k-file tree. The Python
functions are the reference the tests hold the C to, and what runs without a compiler.
"""

from __future__ import annotations

import re

from aistack_tui.knowledge.types import Chunk, Definition

MAX_CHUNK_LINES = 80
WINDOW_LINES = 60
MAX_CHUNK_CHARS = 6000
_COMPOUND = re.compile(r"\b[A-Za-z_][a-z0-9_]*+[A-Z]\w*", re.ASCII)
"""Identifiers with a capital after their first character: the only candidates for
splitting, found in C so the Python loop sees a few per chunk rather than every word."""
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+")


class _Node:
    """A definition with the definitions inside it; its span is read once (the chunker
    compares spans about a hundred times per file)."""

    __slots__ = ("children", "definition", "end", "start")

    def __init__(self, definition: Definition) -> None:
        self.definition = definition
        self.children: list[_Node] = []
        self.start = definition.chunk_start or definition.start_line
        self.end = definition.end_line


def _nest(definitions: list[Definition]) -> list[_Node]:
    """Definitions (sorted by start, longest first) as a containment forest."""
    roots: list[_Node] = []
    stack: list[_Node] = []
    for definition in definitions:
        node = _Node(definition)
        while stack and not (stack[-1].start <= node.start and node.end <= stack[-1].end):
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


class _Builder:
    def __init__(self, lines: list[str], gap_kind: str) -> None:
        self.lines = lines
        self.gap_kind = gap_kind
        self.chunks: list[Chunk] = []

    def add(self, start: int, end: int, symbol: str, kind: str) -> None:
        while start <= end and not self.lines[start - 1].strip():
            start += 1
        while end >= start and not self.lines[end - 1].strip():
            end -= 1
        if start > end:
            return
        text = "\n".join(self.lines[start - 1 : end])[:MAX_CHUNK_CHARS]
        idents = identifier_words(f"{symbol}\n{text}")
        self.chunks.append(Chunk(start, end, symbol, kind, text, idents))

    def windows(self, start: int, end: int, symbol: str, kind: str) -> None:
        for first in range(start, end + 1, WINDOW_LINES):
            self.add(first, min(end, first + WINDOW_LINES - 1), symbol, kind)

    def span(self, start: int, end: int, children: list[_Node], owner: _Node | None) -> None:
        symbol = owner.definition.qualname if owner else ""
        kind = owner.definition.kind if owner else self.gap_kind
        cursor = start
        for child in children:
            if child.start > cursor:
                self.windows(cursor, child.start - 1, symbol, kind)
            self.definition(child)
            cursor = max(cursor, child.end + 1)
        if cursor <= end:
            self.windows(cursor, end, symbol, kind)

    def definition(self, node: _Node) -> None:
        d = node.definition
        # A document section with subsections is split at them: a heading is the unit a
        # reader (and a question) refers to, whatever its length.
        split_section = d.kind == "heading" and bool(node.children)
        if node.end - node.start + 1 <= MAX_CHUNK_LINES and not split_section:
            self.add(node.start, node.end, d.qualname, d.kind)
        elif node.children:
            self.span(node.start, node.end, node.children, node)
        else:
            self.windows(node.start, node.end, d.qualname, d.kind)


def build_chunks_py(lines: list[str], definitions: list[Definition], language: str) -> list[Chunk]:
    """Chunks covering every non-blank line of the file, in file order.

    `definitions` are sorted by (chunk_start or start_line, -end_line), as `extract`
    sorts them; those starting outside the file are left out, and ends past it clipped.
    """
    if not lines:
        return []
    builder = _Builder(lines, "section" if language == "markdown" else "module")
    in_range = [d for d in definitions if 1 <= (d.chunk_start or d.start_line) <= len(lines)]
    clipped = [
        d
        if d.end_line <= len(lines)
        else Definition(
            d.name,
            d.qualname,
            d.kind,
            d.start_line,
            len(lines),
            d.signature,
            d.doc,
            d.chunk_start,
        )
        for d in in_range
    ]
    builder.span(1, len(lines), _nest(clipped), None)
    return builder.chunks


def window_chunks_py(lines: list[str]) -> list[Chunk]:
    """Plain line windows, for files without a grammar."""
    builder = _Builder(lines, "text")
    builder.windows(1, len(lines), "", "text")
    return builder.chunks


def split_identifier(name: str) -> list[str]:
    """`parseHTTPRequest` -> [parse, http, request]; `read_file_v2` -> [read, file, v2]."""
    parts: list[str] = []
    for piece in name.split("_"):
        parts.extend(m.group(0).lower() for m in _CAMEL.finditer(piece))
    return parts


_SPLITS: dict[str, tuple[str, ...]] = {}
_SPLITS_MAX = 100_000


def identifier_words_py(text: str) -> str:
    """The sub-words of every camelCase identifier in `text`, for the FTS `idents` column.

    FTS5's tokenizer already splits snake_case at `_`, but keeps `parseRequest` as one
    token; this column lets `parse request` find it. Only identifiers with an inner
    capital need splitting, and each distinct one is split once per process (a worker
    sees the same names in chunk after chunk).

    `identifier_words` is this function compiled (`_words.c`) where the install could
    build it: on a first index it is several times faster, and this one, the reference
    the tests hold it to, runs where no C compiler was at hand.
    """
    words: dict[str, None] = {}
    for ident in dict.fromkeys(_COMPOUND.findall(text)):
        parts = _SPLITS.get(ident)
        if parts is None:
            if ident.isupper() or not _INNER_CAPITAL.search(ident):
                parts = ()
            else:
                parts = tuple(split_identifier(ident))
            if len(_SPLITS) >= _SPLITS_MAX:
                _SPLITS.clear()
            _SPLITS[ident] = parts
        for part in parts:
            words[part] = None
    return " ".join(words)


try:
    from aistack_tui.knowledge._words import identifier_words
except ImportError:  # installed without a C compiler
    identifier_words = identifier_words_py

try:
    from aistack_tui.knowledge._words import build_chunks, configure, window_chunks
except ImportError:  # no C compiler, or a build from before the chunker was compiled
    build_chunks, window_chunks = build_chunks_py, window_chunks_py
else:
    # The limits are defined here only; a Chunk whose fields differ from the ones the C
    # sets fails here, at import.
    configure(Chunk, MAX_CHUNK_LINES, WINDOW_LINES, MAX_CHUNK_CHARS)
