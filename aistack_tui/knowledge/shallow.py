"""A file's definition matches without the query cursor's walk of every node, in the
languages where a keyword marks where each definition can be.

Tree-sitter's query cursor enters every node of a tree to run a query, whatever its
patterns: over a tree of real sources that walk costs about a quarter of the parse. Told
a `max_start_depth`, it stops going down once no match is in progress, but a definition
deeper than that (a method of a class inside a function, a closure) would be lost.

In Python, Go, Rust and Ruby every definition the query captures owns a keyword token
of its own (`def`, `class`, `func`, `type`, `fn`, `impl`, `module`...). So the cursor
runs down to `SHALLOW_DEPTH`, which holds nearly every definition of real code, and the
rest are found from the keywords: every whole-word occurrence of one in the bytes that
is not in the header of a definition already found is climbed, in the tree, to its
nearest definition node (`KeywordRule.owners`). One that was not found yet has its
subtree queried whole. A keyword in a string or a comment climbs to a definition
already found, or to none, and costs a lookup. The result holds the same matches as the
full query; the tests hold it to that on nested fixtures, on mutated (broken) copies of
them, and on the standard library. A tree with syntax errors gets the full query: error
recovery can leave a definition outside the node that owns its keyword.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field

from tree_sitter import Node, Query, QueryCursor, Tree

Match = tuple[int, dict[str, list[Node]]]
SHALLOW_DEPTH = 4
"""How deep the cursor starts matches: a method in a class is at depth 3, a decorated
one at 4 (Python's module, class, block, decorated definition, function)."""


@dataclass(frozen=True, slots=True)
class KeywordRule:
    keywords: tuple[bytes, ...]
    owners: frozenset[str]
    """The node types that own those keywords: every definition pattern's root, or for
    a root that does not hold the keyword itself, its parent that does (`owned_by`)."""
    owned_by: Mapping[str, str] = field(default_factory=dict)
    """Definition node type -> its parent's type holding the keyword: a Go `type_spec`
    is named inside a `type_declaration`, which holds `type`."""


RULES: dict[str, KeywordRule] = {
    "python": KeywordRule(
        (b"def", b"class"), frozenset({"function_definition", "class_definition"})
    ),
    "go": KeywordRule(
        (b"func", b"type"),
        frozenset({"function_declaration", "method_declaration", "type_declaration"}),
        {"type_spec": "type_declaration"},
    ),
    "rust": KeywordRule(
        (b"fn", b"struct", b"enum", b"union", b"type", b"trait", b"impl", b"mod",
         b"macro_rules"),
        frozenset({"struct_item", "enum_item", "union_item", "type_item", "trait_item",
                   "impl_item", "function_item", "function_signature_item", "mod_item",
                   "macro_definition"}),
    ),
    "ruby": KeywordRule(
        (b"def", b"class", b"module"),
        frozenset({"method", "singleton_method", "class", "module"}),
    ),
}  # fmt: skip

_WORD = bytes(int(chr(i).isascii() and (chr(i).isalnum() or chr(i) == "_")) for i in range(256))
"""1 for the ASCII bytes that continue an identifier. A byte of a non-ASCII character
counts as a boundary: `éclass` then yields a hit that leads nowhere (a lookup), while a
keyword after a character the grammar does not take for a letter is still found."""


def definition_matches(query: Query, tree: Tree, source: bytes, language: str) -> list[Match]:
    """The matches of `query` (a definitions query) over `tree`: the same as
    `QueryCursor(query).matches(tree.root_node)`, cheaper where `RULES` has the language."""
    root = tree.root_node
    rule = RULES.get(language)
    if rule is None or root.has_error:
        # A tree with syntax errors can hold a definition outside the node that owns its
        # keyword (a Go `type_spec` under an ERROR node, not its `type_declaration`).
        return QueryCursor(query).matches(root)
    cursor = QueryCursor(query)
    cursor.set_max_start_depth(SHALLOW_DEPTH)
    matches = cursor.matches(root)
    headers, known = _headers(matches, rule.owned_by)
    starts = [start for start, _ in headers]
    done: list[tuple[int, int]] = []  # subtrees queried whole
    # In order, so an outer definition's subtree is queried before any inside it.
    for at, end in sorted(keyword_hits(source, rule.keywords)):
        i = bisect.bisect_right(starts, at) - 1
        if (i >= 0 and at < headers[i][1]) or any(a <= at < b for a, b in done):
            continue  # the keyword of a definition found, or inside one queried whole
        owner = _owner(root.descendant_for_byte_range(at, end), rule.owners)
        if owner is None or (owner.start_byte, owner.end_byte) in known:
            continue  # in a string or a comment, or a word inside a definition found
        matches += QueryCursor(query).matches(owner)
        done.append((owner.start_byte, owner.end_byte))
    return matches


def _headers(
    matches: list[Match], owned_by: Mapping[str, str]
) -> tuple[list[tuple[int, int]], set[tuple[int, int]]]:
    """The byte spans from each found definition's start (its owner's, see `owned_by`)
    to its name, sorted; and the span of every owner found (two owners never share
    one: each holds its keyword token and the other owners it contains)."""
    headers: list[tuple[int, int]] = []
    known: set[tuple[int, int]] = set()
    for _, captures in matches:
        names = captures.get("name")
        for key, nodes in captures.items():
            if not key.startswith("def.") or not nodes:
                continue
            node = nodes[0]
            if owned_by:
                node_type = node.type
                parent = node.parent if node_type in owned_by else None
                if parent is not None and parent.type == owned_by[node_type]:
                    node = parent
            start, end = node.start_byte, node.end_byte
            known.add((start, end))
            headers.append((start, names[0].start_byte if names else end))
    headers.sort()
    return headers, known


def _owner(node: Node | None, owners: frozenset[str]) -> Node | None:
    # Named nodes only: Ruby's `class` keyword token is itself of type "class".
    while node is not None and not (node.type in owners and node.is_named):
        node = node.parent
    return node


def keyword_hits(source: bytes, keywords: tuple[bytes, ...]) -> list[tuple[int, int]]:
    """(start, end) of each whole-word occurrence of `keywords` in `source`, keyword by
    keyword (`bytes.find`: a quarter of the time of one regex for them all)."""
    hits: list[tuple[int, int]] = []
    size = len(source)
    for keyword in keywords:
        at = source.find(keyword)
        while at >= 0:
            end = at + len(keyword)
            if (at == 0 or not _WORD[source[at - 1]]) and (end == size or not _WORD[source[end]]):
                hits.append((at, end))
            at = source.find(keyword, end)
    return hits
