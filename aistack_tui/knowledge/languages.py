"""Which tree-sitter grammar parses which file, and the compiled queries for each.

Grammars come from the per-language PyPI wheels (they work offline, unlike the language
packs that download at run time). Each is imported only when a file of that language is
first seen, and grammars and queries are cached per process, so a parse worker pays the
load once. A language whose wheel is missing degrades to line-window chunks instead of
failing the whole index.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tree_sitter import Language, Parser, Query

QUERIES_DIR = Path(__file__).parent / "queries"

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


@dataclass(frozen=True, slots=True)
class Grammar:
    """A loaded grammar with its parser and definition/reference query."""

    name: str
    language: Language
    parser: Parser
    query: Query


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
    language = Language(getattr(module, func)())
    source = (QUERIES_DIR / f"{name}.scm").read_text(encoding="utf-8")
    return Grammar(name, language, Parser(language), Query(language, source))


def supported_languages() -> list[str]:
    return sorted(_GRAMMARS)
