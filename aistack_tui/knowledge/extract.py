"""Turn one file's bytes into definitions, references and chunks.

This is a pure function of (bytes, language) so it can run in a worker process: the
parallel pool sends paths and gets `FileExtraction`s back. Definitions come from the
`@def.<kind>` / `@name` captures of `queries/<lang>.scm`; everything the query cannot say
(qualified names, methods vs functions, signatures, docstrings) is derived here from the
syntax tree with the same few rules for every language.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from operator import attrgetter, itemgetter

from tree_sitter import Node, Point, QueryCursor

from aistack_tui.knowledge.chunks import build_chunks, window_chunks
from aistack_tui.knowledge.languages import grammar
from aistack_tui.knowledge.shallow import definition_matches
from aistack_tui.knowledge.types import Definition, FileExtraction

_CONTAINER_KINDS = frozenset({"class", "struct", "interface", "impl", "enum", "trait"})
_WRAPPERS = frozenset(
    {"decorated_definition", "export_statement", "template_declaration", "type_declaration"}
)
_SIGNATURE_MAX = 240
_HEADER_FIELDS = ("parameters", "return_type", "result", "superclasses")
_DOC_MAX = 400
_WS = re.compile(r"\s+")
_COMMENT_MARKS = re.compile(r"^\s*(?:///?|/\*+|\*/|\*|#+|--)\s?")
MAX_PARSE_BYTES = 2_000_000
_NODE_TEXT = attrgetter("text")


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _end_line(node: Node) -> int:
    """1-based last line of `node`."""
    return _last_line(node.start_point.row, node.end_point)


def _last_line(start_row: int, end: Point) -> int:
    """1-based last line of a node starting on `start_row` (0-based) and ending at `end`:
    a node ending at column 0 really ended on the line before."""
    row, col = end
    return row if col == 0 and row > start_row else row + 1


def _signature(node: Node, source: bytes, kind: str) -> str:
    if kind == "heading":
        return _WS.sub(" ", _text(node.child(0))).strip()[:_SIGNATURE_MAX]
    # Up to the end of the parameter list / return type when the grammar names them
    # (this drops comments between the header and the body), else up to the body.
    ends = [
        child.end_byte
        for name in _HEADER_FIELDS
        if (child := node.child_by_field_name(name)) is not None
    ]
    body = node.child_by_field_name("body")
    end = max(ends) if ends else (body.start_byte if body is not None else node.end_byte)
    head = source[node.start_byte : end].decode("utf-8", "replace")
    if not ends:
        # No parameter list: the header is the lines up to the one naming it.
        lines = head.splitlines() or [""]
        name = _text(node.child_by_field_name("name"))
        keep = next((i for i, line in enumerate(lines) if name and name in line), 0)
        head = "\n".join(lines[: keep + 1])
    return _WS.sub(" ", head).strip().rstrip(":{ ").strip()[:_SIGNATURE_MAX]


def _python_docstring(node: Node) -> str:
    body = node.child_by_field_name("body")
    # `named_child(0)`, not `named_children[0]`: a class body can hold hundreds of nodes.
    if body is None or body.named_child_count == 0:
        return ""
    first = body.named_child(0)
    if first is None or first.type != "expression_statement" or first.named_child_count == 0:
        return ""
    string = first.named_child(0)
    if string is None or string.type != "string":
        return ""
    content = "".join(_text(c) for c in string.named_children if c.type == "string_content")
    return content.strip()


def _comment_doc(node: Node) -> str:
    """The comment block directly above a definition (or above its export/decorator)."""
    anchor = node
    while anchor.parent is not None and anchor.parent.type in _WRAPPERS:
        anchor = anchor.parent
    lines: list[str] = []
    expected_row = anchor.start_point.row
    sibling = anchor.prev_sibling
    if sibling is None and anchor.parent is not None:
        sibling = anchor.parent.prev_sibling  # Ruby: the comment sits before the body node
    while sibling is not None and "comment" in sibling.type:
        if _end_line(sibling) < expected_row:  # a blank line separates it: not our doc
            break
        if _text(sibling).startswith("#!"):
            break
        for line in reversed(_text(sibling).splitlines()):
            cleaned = _COMMENT_MARKS.sub("", line).rstrip("*/ ").strip()
            if cleaned:
                lines.append(cleaned)
        expected_row = sibling.start_point.row
        sibling = sibling.prev_sibling
    return " ".join(reversed(lines))


def _docstring(node: Node, language: str) -> str:
    doc = _python_docstring(node) if language == "python" else _comment_doc(node)
    return _WS.sub(" ", doc).strip()[:_DOC_MAX]


def _receiver_type(node: Node) -> str:
    """Go methods: the receiver's type name, so `Server.Start` is the qualified name."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    stack = [receiver]
    while stack:
        current = stack.pop()
        if current.type == "type_identifier":
            return _text(current)
        stack.extend(reversed(current.named_children))
    return ""


def _chunk_start(node: Node) -> int:
    top = node
    while (parent := top.parent) is not None and parent.type in _WRAPPERS:
        top = parent
    return top.start_point.row + 1


@cache
def _has_wrappers(language: str) -> bool:
    """Whether `language`'s grammar has any of the `_WRAPPERS` node types: without them a
    definition's chunk starts on its own first line, and asking each for its parent (a
    walk down from the root in tree-sitter) is time for nothing."""
    loaded = grammar(language)
    return loaded is not None and any(
        loaded.language.id_for_node_kind(kind, True) is not None for kind in _WRAPPERS
    )


_Found = tuple[Node, str, str, Node, tuple[int, int]]
"""A definition's node, its name's text, its kind, its name's node, and the node's
(start byte, -end byte): read from the tree once (each read is a call into tree-sitter),
in the order `_scopes` sorts by."""
_SPAN = itemgetter(4)


def _scopes(found: dict[int, _Found]) -> dict[int, tuple[tuple[str, ...], str]]:
    """Each definition's enclosing definitions (names, outermost first) and the kind of
    the nearest one.

    Definitions nest exactly when their byte ranges do, so one pass over them sorted by
    start (longest first) with a stack finds the enclosing ones, without walking every
    node's parent chain up to the root.
    """
    # (start, -end, the names down to this one, kind)
    stack: list[tuple[int, int, tuple[str, ...], str]] = []
    scopes: dict[int, tuple[tuple[str, ...], str]] = {}
    for node, name, kind, _, (start, negative_end) in sorted(found.values(), key=_SPAN):
        while stack and not (stack[-1][0] <= start and negative_end >= stack[-1][1]):
            stack.pop()
        if stack:
            outer = stack[-1]
            scopes[node.id] = (outer[2], outer[3])
            stack.append((start, negative_end, (*outer[2], name.strip()), kind))
        else:
            scopes[node.id] = ((), "")
            stack.append((start, negative_end, (name.strip(),), kind))
    return scopes


def _definitions(
    matches: list[tuple[int, dict[str, list[Node]]]],
    source: bytes,
    language: str,
    *,
    details: bool = True,
) -> list[Definition]:
    """The definitions among `matches`; without `details`, with no signatures or docs
    (search needs names, kinds and lines; signatures and docs are only shown, in the
    repo map, which waits for a big build's second pass anyway)."""
    found: dict[int, _Found] = {}
    for _, captures in matches:
        names = captures.get("name")
        if not names:
            continue
        for key, nodes in captures.items():
            if key.startswith("def.") and nodes:
                node = nodes[0]
                node_id = node.id
                if node_id not in found:
                    name_node = names[0]
                    span = (node.start_byte, -node.end_byte)
                    found[node_id] = (node, _text(name_node), key[4:], name_node, span)
    scopes = _scopes(found)
    name_line = language in ("c", "cpp")
    wrapped = _has_wrappers(language)
    result: list[Definition] = []
    for node_id, (node, raw_name, kind, name_node, _) in found.items():
        name = " ".join(raw_name.split())  # whitespace runs as one space, as `_WS`
        if not name:
            continue
        scope, parent_kind = scopes[node_id]
        if kind == "function" and parent_kind in _CONTAINER_KINDS:
            kind = "method"
        if kind == "method" and not scope:
            receiver = _receiver_type(node)
            if receiver:
                scope = (receiver,)
        qualname = ".".join((*scope, name)) if kind != "heading" else " > ".join((*scope, name))
        start_row = node.start_point.row
        result.append(
            Definition(
                name,
                qualname,
                kind,
                (name_node.start_point.row if name_line else start_row) + 1,
                _last_line(start_row, node.end_point),
                _signature(node, source, kind) if details else "",
                _docstring(node, language) if details and kind != "heading" else "",
                _chunk_start(node) if wrapped else start_row + 1,
            )
        )
    result.sort(key=_chunk_order)
    return result


def _chunk_order(definition: Definition) -> tuple[int, int]:
    """Outer definitions before the ones they contain (`chunks.build_chunks` nests them)."""
    return definition.chunk_start, -definition.end_line


def extract(source: bytes, language: str, *, references: bool = True) -> FileExtraction:
    """Definitions, references and chunks of one file.

    Unknown languages, plain text and files too large to parse usefully (generated
    tables) become line windows with no definitions. With `references=False` the
    reference patterns are not run, nor are the definitions' signatures and docs
    derived (a fifth of the Python time after the parse), and the result says whether
    any of that is owed (`references_pending`): a big build stores them in a second
    pass (`extract_second_pass`).
    """
    text = source.decode("utf-8", "replace")
    lines = text.splitlines()
    loaded = grammar(language) if len(source) <= MAX_PARSE_BYTES else None
    if loaded is None:
        return FileExtraction(
            language=language,
            definitions=(),
            references=(),
            chunks=tuple(window_chunks(lines)),
            line_count=len(lines),
        )
    tree = loaded.parser.parse(source)
    if references:
        matches = QueryCursor(loaded.query).matches(tree.root_node)
    else:
        matches = definition_matches(loaded.definitions, tree, source, language)
    definitions = _definitions(matches, source, language, details=references)
    owes_references = loaded.has_references
    return FileExtraction(
        language=language,
        definitions=tuple(definitions),
        references=_count_references(matches) if references else (),
        chunks=tuple(build_chunks(lines, definitions, language)),
        line_count=len(lines),
        references_pending=not references and (bool(definitions) or owes_references),
    )


def extract_second_pass(
    source: bytes, language: str
) -> tuple[tuple[tuple[str, int], ...], tuple[Definition, ...]]:
    """What `extract(..., references=False)` left out, for the second pass of a big
    build: the file's references, and its definitions again with their signatures and
    docs (the same definitions: the same bytes, parsed the same way). One parse and one
    query with both pattern sets, as a one-pass `extract` runs."""
    loaded = grammar(language) if len(source) <= MAX_PARSE_BYTES else None
    if loaded is None:
        return (), ()
    tree = loaded.parser.parse(source)
    matches = QueryCursor(loaded.query).matches(tree.root_node)
    return _count_references(matches), tuple(_definitions(matches, source, language))


def _count_references(
    matches: list[tuple[int, dict[str, list[Node]]]],
) -> tuple[tuple[str, int], ...]:
    """Names used, with their counts, sorted by name; one-letter names are left out."""
    # Counted as raw bytes (one decode per distinct name, not per use); a stdlib-sized
    # tree has ~650k reference captures, so the loop stays as bare as possible.
    ref_nodes: list[Node] = []
    for _, captures in matches:
        nodes = captures.get("ref")
        if nodes is not None:
            ref_nodes += nodes
    raw: Counter[bytes | None] = Counter(map(_NODE_TEXT, ref_nodes))
    refs: Counter[str] = Counter()
    for key, count in raw.items():
        if not key:
            continue
        name = key.decode("utf-8", "replace")
        if len(name) > 1:
            refs[name] += count
    return tuple(sorted(refs.items()))
