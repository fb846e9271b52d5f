"""Symbol extraction across languages: names, kinds and line ranges on a fixture repo."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.knowledge.extract import extract
from aistack_tui.knowledge.languages import (
    Grammar,
    grammar,
    language_for,
    query_patterns,
    split_patterns,
    supported_languages,
)

POLYGLOT = Path(__file__).parent / "fixtures" / "polyglot"

# file -> [(qualified name, kind, start line, end line)], checked as a subset.
EXPECTED: dict[str, list[tuple[str, str, int, int]]] = {
    "shapes.py": [
        ("Shape", "class", 6, 14),
        ("Shape.area", "method", 9, 10),
        ("Shape.name", "method", 13, 14),
        ("Circle", "class", 17, 23),
        ("Circle.__init__", "method", 18, 19),
        ("total_area", "function", 26, 27),
    ],
    "cart.js": [
        ("Cart", "class", 2, 10),
        ("Cart.addItem", "method", 7, 9),
        ("cartTotal", "function", 13, 15),
        ("emptyCart", "function", 17, 17),
    ],
    "user.ts": [
        ("User", "interface", 1, 4),
        ("UserId", "type", 6, 6),
        ("Role", "enum", 8, 11),
        ("UserService", "class", 13, 19),
        ("UserService.findById", "method", 16, 18),
        ("greet", "function", 21, 23),
    ],
    "button.tsx": [("Button", "function", 3, 5), ("IconButton", "function", 7, 9)],
    "server.go": [
        ("Server", "struct", 6, 8),
        ("Handler", "interface", 11, 13),
        ("NewServer", "function", 16, 18),
        ("Server.Start", "method", 21, 23),
    ],
    "stack.rs": [
        ("Stack", "struct", 2, 4),
        ("Op", "enum", 6, 9),
        ("Sized2", "interface", 11, 13),
        ("Stack.new", "method", 16, 18),
        ("Stack.push", "method", 20, 22),
        ("helper", "function", 25, 27),
    ],
    "Account.java": [
        ("Account", "class", 4, 18),
        ("Account.deposit", "method", 11, 13),
        ("Account.Listener", "interface", 15, 17),
    ],
    "list.c": [
        ("node", "struct", 3, 6),
        ("node_t", "type", 8, 8),
        ("node_new", "function", 11, 16),
        ("list_length", "function", 18, 22),
    ],
    "matrix.cpp": [
        ("linalg", "module", 3, 20),
        ("linalg.Matrix", "class", 5, 12),
        ("linalg.Matrix.rows", "method", 8, 8),
        ("linalg.trace", "function", 16, 18),
    ],
    "greeter.rb": [
        ("Greetings", "module", 1, 16),
        ("Greetings.Greeter", "class", 3, 15),
        ("Greetings.Greeter.greet", "method", 8, 10),
        ("Greetings.Greeter.default", "method", 12, 14),
    ],
    "GUIDE.md": [
        ("User guide", "heading", 1, 15),
        ("User guide > Installation", "heading", 5, 8),
        ("User guide > Usage > Advanced usage", "heading", 13, 15),
    ],
    "build.sh": [("build_all", "function", 2, 4)],
}


@pytest.mark.parametrize("filename", sorted(EXPECTED))
def test_definitions_have_expected_names_kinds_and_lines(filename: str) -> None:
    path = POLYGLOT / filename
    language = language_for(filename)
    assert language is not None
    result = extract(path.read_bytes(), language)
    found = {(d.qualname, d.kind, d.start_line, d.end_line) for d in result.definitions}
    missing = [e for e in EXPECTED[filename] if e not in found]
    assert not missing, f"missing {missing}; found {sorted(found)}"


def test_signatures_and_docstrings_are_extracted() -> None:
    result = extract((POLYGLOT / "shapes.py").read_bytes(), "python")
    by_name = {d.qualname: d for d in result.definitions}
    assert by_name["Shape"].doc == "Base class of every shape."
    assert by_name["Circle.area"].doc == "Pi r squared."
    assert by_name["total_area"].signature == "def total_area(shapes: list[Shape]) -> float"
    assert by_name["Shape.name"].chunk_start == 12  # the @property line is in the chunk
    go = {d.qualname: d for d in extract((POLYGLOT / "server.go").read_bytes(), "go").definitions}
    assert go["Server.Start"].doc == "Start listens and serves."
    c = {d.qualname: d for d in extract((POLYGLOT / "list.c").read_bytes(), "c").definitions}
    assert c["node_new"].doc == "Allocate a node holding value."


def test_references_name_the_identifiers_a_file_uses() -> None:
    refs = dict(extract((POLYGLOT / "shapes.py").read_bytes(), "python").references)
    assert {"area", "radius", "Shape"} <= set(refs)
    go_refs = dict(extract((POLYGLOT / "server.go").read_bytes(), "go").references)
    assert "ListenAndServe" in go_refs and "Server" in go_refs


def test_chunks_cover_each_definition_and_split_large_ones() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(200))
    source = f"import os\n\n\ndef big():\n{body}\n\n\ndef small():\n    return 1\n".encode()
    result = extract(source, "python")
    chunks = result.chunks
    assert chunks[0].kind == "module" and chunks[0].text == "import os"
    big = [c for c in chunks if c.symbol == "big"]
    assert len(big) >= 3 and all(c.end_line - c.start_line < 80 for c in big)
    assert [c.symbol for c in chunks][-1] == "small"
    assert chunks[-1].start_line == 207


def test_large_class_is_split_into_its_methods() -> None:
    methods = "\n".join(
        f"    def m{i}(self):\n" + "\n".join(f"        a = {j}" for j in range(8))
        for i in range(12)
    )
    source = f'class Big:\n    """Doc."""\n\n{methods}\n'.encode()
    chunks = extract(source, "python").chunks
    symbols = [c.symbol for c in chunks]
    assert symbols[0] == "Big" and chunks[0].text.startswith("class Big:")
    assert "Big.m0" in symbols and "Big.m11" in symbols


def test_every_grammar_and_query_loads() -> None:
    for name in supported_languages():
        loaded = grammar(name)
        assert loaded is not None, name
        assert loaded.query.pattern_count > 0 and loaded.definitions.pattern_count > 0


def _code(pattern: bytes) -> str:
    """A pattern's text without the comments and blank lines tree-sitter counts in it."""
    lines = pattern.decode().splitlines()
    return "\n".join(line for line in lines if line.strip() and not line.lstrip().startswith(";"))


def test_query_files_are_split_into_patterns_as_tree_sitter_reads_them() -> None:
    """The definitions query is cut from the query file's text without compiling the
    whole file (a first pass needs no other): the cut must match tree-sitter's own
    reading of every shipped query, pattern for pattern."""
    for name in supported_languages():
        loaded = grammar(name)
        assert loaded is not None
        source, query = loaded.source.encode(), loaded.query
        theirs = [
            _code(source[query.start_byte_for_pattern(i) : query.end_byte_for_pattern(i)])
            for i in range(query.pattern_count)
        ]
        assert [_code(p.encode()) for p in query_patterns(loaded.source)] == theirs, name
        definitions, references = split_patterns(loaded.source)
        assert "@ref" not in definitions and ("@ref" in references) == loaded.has_references


def test_a_query_pattern_must_start_a_line_and_indent_its_continuation() -> None:
    assert query_patterns("; c\n(a (b) @x)\n\n[(c) (d)] @y\n(e\n  f: (g)) @z\n") == [
        "(a (b) @x)", "[(c) (d)] @y", "(e\n  f: (g)) @z"
    ]
    with pytest.raises(ValueError, match="outside any pattern"):
        query_patterns("(a)\nb: (c)\n")
    with pytest.raises(ValueError, match="captures a definition and a reference"):
        split_patterns("(call (identifier) @ref) @def.function\n")


def test_a_first_pass_compiles_only_the_definitions_query() -> None:
    fresh = Grammar("python", grammar("python").language, grammar("python").source)  # type: ignore[union-attr]
    extract_definitions_only = fresh.definitions
    assert fresh._query is None and extract_definitions_only.pattern_count == 2


def test_unknown_and_plain_text_files_become_line_windows() -> None:
    text = "\n".join(f"line {i}" for i in range(130)).encode()
    result = extract(text, "text")
    assert result.definitions == ()
    assert [(c.start_line, c.end_line) for c in result.chunks] == [(1, 60), (61, 120), (121, 130)]
    assert language_for("notes.txt") == "text"
    assert language_for("photo.png") is None


def test_broken_source_still_yields_what_parses() -> None:
    result = extract(b"def ok():\n    return 1\n\ndef broken(:\n", "python")
    assert "ok" in {d.name for d in result.definitions}


NESTED = b"""class Outer:
    class Inner:
        def method(self):
            return 1

    @staticmethod
    def deco():
        def local():
            return 2
        return local


def top():
    class InFunc:
        def m(self):
            return 3
    return InFunc
"""


def test_nested_definitions_get_qualified_names_from_their_enclosing_ones() -> None:
    """Scopes come from byte-range nesting (one sorted pass), not parent-chain walks:
    classes in classes, functions in methods and classes in functions."""
    found = [
        (d.qualname, d.kind, d.start_line, d.end_line)
        for d in extract(NESTED, "python").definitions
    ]
    assert found == [
        ("Outer", "class", 1, 10),
        ("Outer.Inner", "class", 2, 4),
        ("Outer.Inner.method", "method", 3, 4),
        ("Outer.deco", "method", 7, 10),
        ("Outer.deco.local", "function", 8, 9),
        ("top", "function", 13, 17),
        ("top.InFunc", "class", 14, 16),
        ("top.InFunc.m", "method", 15, 16),
    ]


def test_reference_counts_are_per_name_and_skip_one_letter_names() -> None:
    source = b"def f(x):\n    return helper(x) + helper(x) + obj.attr + obj.attr + y\n"
    refs = dict(extract(source, "python").references)
    assert refs["helper"] == 2 and refs["attr"] == 2
    assert "x" not in refs and "y" not in refs
