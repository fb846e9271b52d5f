"""The plain data the indexer passes around: definitions, chunks, hits and statistics.

Everything here is a small frozen dataclass so parse results can cross a process
boundary (the parallel parse pool pickles them) and tests can compare them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition found by tree-sitter.

    `start_line` is the line of the definition itself (where ctags puts it);
    `chunk_start` also covers decorators and leading attributes, so a chunk shows them.
    Lines are 1-based and inclusive.
    """

    name: str
    qualname: str
    kind: str
    start_line: int
    end_line: int
    signature: str = ""
    doc: str = ""
    chunk_start: int = 0

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as a plain tuple: the parse workers send ~100k of these per 2,000
        # files, and the default dataclass reduction costs twice the time.
        return (Definition, _definition_fields(self))


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a file stored, searched and injected as one unit."""

    start_line: int
    end_line: int
    symbol: str
    kind: str
    text: str
    idents: str = ""
    """Sub-words of the compound identifiers in symbol and text (for FTS); computed in
    the parse workers so the main process only inserts."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (Chunk, _chunk_fields(self))


_definition_fields = attrgetter(*Definition.__slots__)
_chunk_fields = attrgetter(*Chunk.__slots__)
DefinitionRow = tuple[str, str, str, int, int, str, str, int]
"""A `Definition`'s fields in order, as a plain tuple."""
ChunkRow = tuple[int, int, str, str, str, str]
"""A `Chunk`'s fields in order, as a plain tuple."""


def definition_rows(definitions: tuple[Definition, ...]) -> tuple[DefinitionRow, ...]:
    return tuple(map(_definition_fields, definitions))


@dataclass(frozen=True, slots=True)
class FileExtraction:
    """What one file yields: its definitions, the names it uses, and its chunks.

    Pickled (a parse worker's result), it arrives as a `PackedExtraction`: the main
    process only stores the rows, and rebuilding ~20 dataclasses per file there cost
    more than the rest of the unpickling.
    """

    language: str
    definitions: tuple[Definition, ...]
    references: tuple[tuple[str, int], ...]
    chunks: tuple[Chunk, ...]
    line_count: int
    references_pending: bool = False
    """The references, and the definitions' signatures and docs, were left for a second
    pass (`extract(..., references=False)`)."""

    def __reduce__(self) -> tuple[Any, ...]:
        # The rows are made by `attrgetter` in C: no Python call per object either way.
        return (PackedExtraction, (
            self.language, definition_rows(self.definitions), self.references,
            tuple(map(_chunk_fields, self.chunks)), self.line_count, self.references_pending,
        ))  # fmt: skip

    def definition_rows(self) -> tuple[DefinitionRow, ...]:
        return definition_rows(self.definitions)

    def chunk_rows(self) -> tuple[ChunkRow, ...]:
        return tuple(map(_chunk_fields, self.chunks))


@dataclass(frozen=True, slots=True)
class PackedExtraction:
    """A `FileExtraction` as it crosses a process boundary: the same fields, with its
    definitions and chunks as plain tuples (`DefinitionRow`, `ChunkRow`)."""

    language: str
    definitions: tuple[DefinitionRow, ...]
    references: tuple[tuple[str, int], ...]
    chunks: tuple[ChunkRow, ...]
    line_count: int
    references_pending: bool = False

    def __reduce__(self) -> tuple[Any, ...]:
        return (PackedExtraction, _packed_fields(self))

    def definition_rows(self) -> tuple[DefinitionRow, ...]:
        return self.definitions

    def chunk_rows(self) -> tuple[ChunkRow, ...]:
        return self.chunks


_packed_fields = attrgetter(*PackedExtraction.__slots__)


@dataclass(frozen=True, slots=True)
class CodeHit:
    """A search result: where it is, what it is, and a short excerpt."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    snippet: str
    score: float


@dataclass(slots=True)
class IndexStats:
    """What one refresh did. `parsed` counts files whose content changed and were
    re-parsed; `touched` files had a new mtime but the same content hash."""

    files_seen: int = 0
    parsed: int = 0
    touched: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    chunks_embedded: int = 0
    files_total: int = 0
    symbols_total: int = 0
    chunks_total: int = 0
    seconds: float = 0.0
    searchable_seconds: float = 0.0
    """When definitions, references and chunks were stored: text and symbol search are
    up to date (the repo map and vectors follow in the background)."""
    references_seconds: float = 0.0
    """When a big build's second pass had stored every file's references (0 when the
    references came with the definitions)."""
    map_seconds: float = 0.0
    """When the repo-map graph was rebuilt (0 until then; set by the background task)."""
    parsed_paths: list[str] = field(default_factory=list)
