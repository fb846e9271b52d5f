"""The YAML front matter of SKILL.md files, read with PyYAML.

SKILL.md files are written for several agents, so their front matter is whatever YAML those
agents accept: flow lists with quoted commas (`allowed-tools: ["Bash(git add, commit)"]`),
block lists, folded strings, nested `metadata:`. A real YAML parser reads all of it; this
module adds what a skill author needs on top: errors that name the file and the line, a
duplicate key reported instead of silently replacing the first, and every scalar kept as
text (`BaseLoader`), so `version: 1.10` stays "1.10" and `name: no` stays "no". The loader
constructs only strings, lists and mappings, so a tag such as `!!python/object` is inert.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import yaml
from yaml.nodes import MappingNode, Node

Value: TypeAlias = "str | list[Value] | dict[str, Value]"
_FENCE = "---"
# The front matter starts on the file's second line, after the opening fence.
_FIRST_LINE = 2


class FrontMatterError(ValueError):
    """The front matter is malformed; `str()` is `path:line: why`."""


@dataclass(frozen=True, slots=True)
class Document:
    fields: dict[str, Value]
    body: str
    lines: dict[str, int] = field(default_factory=lambda: {})
    """The file line each top-level key is on, for errors about its value."""

    def where(self, path: Path, key: str) -> str:
        """`path:line` of the key, or just the path when the key is absent."""
        line = self.lines.get(key)
        return f"{path}:{line}" if line is not None else str(path)


class _Loader(yaml.BaseLoader):
    """BaseLoader (every scalar a string) that refuses duplicate keys."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            key = str(key_node.value)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key '{key}'", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def split_front_matter(text: str, path: Path) -> tuple[list[str], str, int]:
    """The front matter lines, the body, and the line number the body starts at."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != _FENCE:
        raise FrontMatterError(
            f"{path}:1: SKILL.md must start with '---' and YAML front matter "
            "(name, description)"
        )
    for index in range(1, len(lines)):
        if lines[index].strip() == _FENCE:
            body = "\n".join(lines[index + 1 :]).strip("\n")
            return lines[1:index], body, index + 2
    raise FrontMatterError(f"{path}:1: the front matter has no closing '---' line")


def _explain(error: yaml.MarkedYAMLError, lines: list[str]) -> tuple[int, str]:
    """(front matter line index, message) for a PyYAML error, in a skill author's words.

    PyYAML reports where it gave up; for a token that never ended (a quote, a key without
    its colon) the line the token started on is the one to fix, which is `context_mark`.
    """
    problem = error.problem or "invalid YAML"
    context = error.context or ""
    mark = error.problem_mark
    started = error.context_mark
    if "quoted scalar" in context and started is not None:
        line = lines[started.line] if started.line < len(lines) else ""
        quote = line[started.column : started.column + 1] or '"'
        return started.line, f"unterminated {quote} string"
    if "could not find expected ':'" in problem and started is not None:
        got = lines[started.line].strip() if started.line < len(lines) else ""
        return started.line, f"expected 'key: value', got {got!r}"
    if context.startswith("while parsing a flow") and started is not None:
        opener = "[ list" if "sequence" in context else "{ mapping"
        return started.line, f"unterminated {opener} ({problem})"
    at = mark.line if mark is not None else 0
    if "'\\t'" in problem:
        return at, "tabs are not allowed for indentation; use spaces"
    if "mapping values are not allowed here" in problem:
        return at, "unexpected ':'; quote the value if it contains ': ' (\"a: b\")"
    if "duplicate key" in problem:
        return at, problem
    detail = f"{context}: {problem}" if context else problem
    return at, f"invalid YAML ({detail})"


def _compose(lines: list[str], path: Path) -> tuple[dict[str, Value], dict[str, int]]:
    """The fields of the front matter and the file line of each key."""
    loader = _Loader("\n".join(lines))
    try:
        root: Node | None = loader.get_single_node()
        if root is None:
            return {}, {}
        if not isinstance(root, MappingNode):
            raise FrontMatterError(
                f"{path}:{root.start_mark.line + _FIRST_LINE}: the front matter must be "
                "'key: value' lines"
            )
        if root.start_mark.column:
            raise FrontMatterError(
                f"{path}:{root.start_mark.line + _FIRST_LINE}: unexpected indentation"
            )
        key_lines = {
            str(key.value): key.start_mark.line + _FIRST_LINE for key, _ in root.value
        }
        data = loader.construct_document(root)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    except yaml.MarkedYAMLError as e:
        index, why = _explain(e, lines)
        raise FrontMatterError(f"{path}:{index + _FIRST_LINE}: {why}") from e
    except yaml.YAMLError as e:
        raise FrontMatterError(f"{path}:{_FIRST_LINE}: invalid YAML ({e})") from e
    finally:
        loader.dispose()  # pyright: ignore[reportUnknownMemberType]
    return data, key_lines  # pyright: ignore[reportUnknownVariableType]


def parse(text: str, path: Path) -> Document:
    """Parse a SKILL.md: its front matter fields and its body (front matter stripped)."""
    lines, body, _ = split_front_matter(text, path)
    fields, key_lines = _compose(lines, path)
    return Document(fields, body, key_lines)
