"""Which tree-sitter grammar parses which file, and the compiled queries for each.

Grammars come from the per-language PyPI wheels (they work offline, unlike the language
packs that download at run time). Each is imported only when a file of that language is
first seen, and grammars and queries are cached per process, so a parse worker pays the
load once. A language whose wheel is missing degrades to line-window chunks instead of
failing the whole index.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

from tree_sitter import Language, Parser, Query

QUERIES_DIR = Path(__file__).parent / "queries"
_REF_CAPTURE = re.compile(r"@ref\b")
_DEF_CAPTURE = re.compile(r"@(?:def\.|name\b)")

# language name -> (module, function returning the grammar capsule)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".rb": "ruby", ".rake": "ruby",
    ".sh": "bash", ".bash": "bash",
    ".md": "markdown", ".markdown": "markdown",
}  # fmt: skip

# Plain-text files worth indexing as line windows (no grammar, or grammar not wanted).
TEXT_EXTENSIONS: frozenset[str] = frozenset(
    {
        ".txt", ".rst", ".toml", ".yaml", ".yml", ".json", ".ini", ".cfg", ".conf",
        ".html", ".htm", ".css", ".scss", ".sql", ".proto", ".graphql", ".xml",
        ".kt", ".kts", ".swift", ".scala", ".php", ".lua", ".pl", ".r", ".cs", ".m",
        ".ex", ".exs", ".erl", ".hs", ".ml", ".zig", ".nim", ".dart", ".vue", ".svelte",
        ".gradle", ".cmake", ".mk", ".tf", ".env.example", ".zsh", ".fish", ".ps1",
        ".bat", ".dockerfile", ".s", ".asm", ".tex", ".csv", ".lock",
    }
)  # fmt: skip
TEXT_FILENAMES: frozenset[str] = frozenset(
    {"Makefile", "Dockerfile", "README", "LICENSE", "CMakeLists.txt", "Gemfile", "Rakefile",
     "Jenkinsfile", "Procfile", "Vagrantfile", "Kconfig", "Kbuild"}
)  # fmt: skip


def language_for(path: str) -> str | None:
    """The grammar name for a path, `"text"` for indexable plain text, None to skip."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    lang = EXTENSIONS.get(ext)
    if lang is not None:
        return lang
    if ext in TEXT_EXTENSIONS or name in TEXT_FILENAMES:
        return "text"
    return None


class Grammar:
    """A loaded grammar with its parser and its queries, each compiled on first use.

    `query` holds every pattern of `queries/<lang>.scm`; `definitions` holds its
    `@def`/`@name` patterns alone, for a big build that stores definitions and chunks
    first (searchable) and references in a second pass (see `pipeline.reference_batch`).
    The same patterns yield the same captures whichever query holds them. Compiling the
    queries costs far more than loading the grammar (0.28 CPU-s for the dozen languages
    against 4 ms), and a first pass needs only `definitions`.
    """

    __slots__ = ("_definitions", "_query", "definitions_source", "has_references",
                 "language", "name", "parser", "source")  # fmt: skip

    def __init__(self, name: str, language: Language, source: str) -> None:
        self.name = name
        self.language = language
        self.parser = Parser(language)
        self.source = source
        self.definitions_source, references = split_patterns(source)
        self.has_references = bool(references)
        """False when the language's query captures no references (Markdown)."""
        self._query: Query | None = None
        self._definitions: Query | None = None

    @property
    def query(self) -> Query:
        if self._query is None:
            self._query = Query(self.language, self.source)
        return self._query

    @property
    def definitions(self) -> Query:
        if self._definitions is None:
            self._definitions = Query(self.language, self.definitions_source)
        return self._definitions


@cache
def grammar(name: str) -> Grammar | None:
    """The grammar for `name`, or None when its wheel is not installed."""
    spec = _GRAMMARS.get(name)
    if spec is None:
        return None
    module_name, func = spec
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    source = (QUERIES_DIR / f"{name}.scm").read_text(encoding="utf-8")
    return Grammar(name, Language(getattr(module, func)()), source)


def query_patterns(source: str) -> list[str]:
    """The patterns of a query file, read without compiling it: each starts with `(` or
    `[` at the start of a line, and its further lines are indented; `;` comments and
    blank lines fall between them (`tests/knowledge/test_extract.py` holds every query
    file to tree-sitter's own reading)."""
    patterns: list[list[str]] = []
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if line[0] in "([":
            patterns.append([line])
        elif patterns and line[0].isspace():
            patterns[-1].append(line)
        else:
            raise ValueError(f"a query line outside any pattern: {line!r}")
    return ["\n".join(lines) for lines in patterns]


def split_patterns(source: str) -> tuple[str, str]:
    """A query's source, cut into its definition patterns and its reference patterns.

    A pattern capturing both would have to run in both passes, so none may.
    """
    definitions: list[str] = []
    references: list[str] = []
    for pattern in query_patterns(source):
        is_reference = _REF_CAPTURE.search(pattern) is not None
        if is_reference and _DEF_CAPTURE.search(pattern):
            raise ValueError(f"a pattern captures a definition and a reference: {pattern}")
        (references if is_reference else definitions).append(pattern)
    return "\n".join(definitions), "\n".join(references)


def supported_languages() -> list[str]:
    return sorted(_GRAMMARS)
