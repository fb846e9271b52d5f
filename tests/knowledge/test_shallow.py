"""The first pass's definitions without the query's walk of every node
(`knowledge/shallow.py`) must be the full query's, match for match: deep definitions,
keywords in strings and comments, and real code."""

from __future__ import annotations

import random
import re
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_sitter import Node, QueryCursor

from aistack_tui.knowledge.extract import extract
from aistack_tui.knowledge.languages import grammar, query_patterns
from aistack_tui.knowledge.shallow import (
    RULES,
    SHALLOW_DEPTH,
    definition_matches,
    keyword_hits,
)

Key = tuple[int, tuple[tuple[str, tuple[int, ...]], ...]]


def _keys(matches: list[tuple[int, dict[str, list[Node]]]]) -> set[Key]:
    return {
        (pattern, tuple(sorted((name, tuple(n.id for n in nodes)) for name, nodes in caps.items())))
        for pattern, caps in matches
    }


def _depth(node: Node) -> int:
    depth = 0
    while node.parent is not None:
        node, depth = node.parent, depth + 1
    return depth


def _both(source: bytes, language: str) -> tuple[list, list]:
    loaded = grammar(language)
    assert loaded is not None
    tree = loaded.parser.parse(source)
    full = QueryCursor(loaded.definitions).matches(tree.root_node)
    return full, definition_matches(loaded.definitions, tree, source, language)


def _deepest(matches: list[tuple[int, dict[str, list[Node]]]]) -> int:
    return max(
        _depth(nodes[0]) for _, caps in matches for key, nodes in caps.items()
        if key.startswith("def.")
    )  # fmt: skip


NESTED = {
    "python": b'''
"""A module docstring that says def and class."""
class Outer:
    def method(self):
        if self:
            for item in self:
                with item:
                    class Local:
                        @staticmethod
                        async def deep(x="def in a default"):
                            def deeper():
                                return lambda: "class"
                            return deeper
    # def in a comment
    x = "class in a string"
try:
    pass
except Exception:
    def fallback(): pass
''',
    "go": b'''package main

// func in a comment, type in a comment
func outer() {
	if true {
		for i := 0; i < 3; i++ {
			func() {
				type deepStruct struct{ a int }
				type (
					deepNamed int
					deepIface interface{ M() }
				)
				_ = "func type in a string"
			}()
		}
	}
}

type T struct{}

func (t *T) Method(f func() int) {}
''',
    "rust": b'''
mod a { mod b { mod c {
    impl X {
        fn deep() {
            fn inner() {
                struct S;
                enum E { A }
                trait Tr { fn sig(&self); }
                union U { a: u32 }
                type Alias = u8;
            }
        }
    }
} } }
fn f(g: fn(u8) -> u8) { let s = "fn struct impl in a string"; let c = |x: u8| { fn in_closure() {} }; }
macro_rules! m { () => {} }
// fn commented() {}
''',
    "ruby": b'''
module A
  module B
    class C
      class << self
        def deep_singleton; end
      end
      def m
        [1].each do |x|
          if x
            class Inner
              def inner_method; end
            end
          end
        end
      end
      def self.s; end
    end
  end
end
# def commented
x = "class in a string"
y = obj.class
''',
}


@pytest.mark.parametrize("language", sorted(NESTED))
def test_deep_definitions_are_found_as_the_full_query_finds_them(language: str) -> None:
    full, shallow = _both(NESTED[language], language)
    assert _deepest(full) > SHALLOW_DEPTH + 2  # the keywords, not the cursor, found these
    assert _keys(shallow) == _keys(full)


def test_every_definition_pattern_roots_at_a_node_owning_a_keyword() -> None:
    """The rule's soundness: a pattern added to a query must name an owner here too, or
    its definitions deeper than `SHALLOW_DEPTH` would be missed."""
    for language, rule in RULES.items():
        loaded = grammar(language)
        assert loaded is not None
        owned = dict(rule.owned_by)
        for pattern in query_patterns(loaded.definitions_source):
            root = re.match(r"[(\[]\s*\(?(\w+)", pattern)
            assert root is not None, pattern
            node_type = root.group(1)
            assert node_type in rule.owners or owned.get(node_type) in rule.owners, (
                language, node_type
            )


def test_a_language_without_a_rule_runs_the_full_query() -> None:
    source = b"const f = () => { function g() { return { h() {} } } }\n"
    full, shallow = _both(source, "javascript")
    assert len(full) == 3
    assert _keys(shallow) == _keys(full)


def test_keyword_hits_are_whole_words() -> None:
    source = "def undef define _def def_ d\u00e9f class classy (class) def".encode()
    hits = sorted(keyword_hits(source, (b"def", b"class")))
    assert [source[a:b] for a, b in hits] == [b"def", b"class", b"class", b"def"]
    assert hits[0][0] == 0 and hits[-1][1] == len(source)


def test_a_keyword_next_to_a_non_ascii_byte_is_still_a_candidate() -> None:
    """Found by mutating sources: after a byte the grammar does not read as a letter,
    tree-sitter still lexes the keyword, so the scan must not take it for a word."""
    source = "\u00e9class \u2026def".encode() + b"\x8dclass"
    assert len(keyword_hits(source, (b"def", b"class"))) == 3


_INSERTS = [b"def ", b"class ", b"fn ", b"func ", b"type ", b"(", b")", b"{", b"}", b":",
            b"\n    ", b'"', b"'" * 3, b"#", b"/*", b"\x00", b"\xff\xfe", b"\x8d"]  # fmt: skip


@pytest.mark.parametrize("language", sorted(NESTED))
def test_broken_sources_get_the_full_query_matches(language: str) -> None:
    """Seeded mutations of the fixtures (cut bytes, stray keywords and brackets, bad
    UTF-8): a tree with syntax errors can hold a definition outside the node owning its
    keyword (a Go `type_spec` under an ERROR node), so such a tree gets the full query."""
    rng = random.Random(26)
    for _ in range(150):
        data = bytearray(NESTED[language])
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(len(data) + 1)
            if rng.random() < 0.4:
                del data[at : at + rng.randint(1, 30)]
            else:
                data[at:at] = rng.choice(_INSERTS)
        full, shallow = _both(bytes(data), language)
        assert _keys(shallow) == _keys(full), bytes(data)


def test_the_standard_library_gets_the_same_definitions() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        path for package in ("asyncio", "email", "json", "unittest", "concurrent", "importlib")
        for path in (stdlib / package).rglob("*.py")
    )  # fmt: skip
    assert len(files) > 100
    deep = 0
    for path in files:
        source = path.read_bytes()
        full, shallow = _both(source, "python")
        assert _keys(shallow) == _keys(full), path
        deep += bool(full) and _deepest(full) > SHALLOW_DEPTH
    assert deep > 5  # real code nests deeper than the cursor goes


def test_first_pass_extraction_keeps_every_definition() -> None:
    source = NESTED["python"]
    first = extract(source, "python", references=False)
    whole = extract(source, "python")
    assert [(d.qualname, d.start_line) for d in first.definitions] == [
        (d.qualname, d.start_line) for d in whole.definitions
    ]
    assert "Outer.method.Local.deep.deeper" in {d.qualname for d in first.definitions}


_STATEMENTS = st.sampled_from(["if x:", "for y in z:", "with w:", "while v:", "try:"])


@st.composite
def _python_nesting(draw: st.DrawFn) -> str:
    """Python with definitions at random depths under random compound statements, and
    the keywords in strings and comments around them."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        depth = 0
        for _ in range(draw(st.integers(0, 9))):
            kind = draw(st.sampled_from(["def", "class", "stmt"]))
            pad = "    " * depth
            if kind == "stmt":
                head = draw(_STATEMENTS)
                lines.append(pad + head)
                if head == "try:":
                    lines += [pad + "    pass", pad + "except E:"]
            else:
                name = draw(st.sampled_from(["a", "b", "c"])) + str(len(lines))
                args = "(self)" if kind == "def" else ""
                lines.append(f"{pad}{kind} {name}{args}:")
            lines.append(pad + "    " + draw(st.sampled_from(['"def"', "# class", "x = 1"])))
            depth += 1
        lines.append("    " * depth + "pass")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(_python_nesting())
def test_random_python_nesting_gets_the_full_query_matches(source: str) -> None:
    full, shallow = _both(source.encode(), "python")
    assert _keys(shallow) == _keys(full)
