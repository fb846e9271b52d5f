"""A small, strict parser for the YAML front matter of SKILL.md files.

PyYAML is not a dependency, and SKILL.md front matter uses a tiny part of YAML: `key:
value` pairs whose values are plain or quoted strings, `>` / `|` block strings, inline
`[a, b]` or block `- item` lists, and one level of nested mapping (`metadata:`). This
parser accepts exactly that and rejects anything else with the file and line, because a
skill that silently lost its description would never be chosen by the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

Value: TypeAlias = "str | list[str] | dict[str, str]"
_KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(?:\s+(.*)|\s*)$")
_FENCE = "---"


class FrontMatterError(ValueError):
    """The front matter is malformed; `str()` is `path:line: why`."""


@dataclass(frozen=True, slots=True)
class Document:
    fields: dict[str, Value]
    body: str


def _scalar(raw: str, where: str) -> str:
    text = raw.strip()
    if not text:
        return ""
    if text[0] in "\"'":
        quote = text[0]
        if len(text) < 2 or not text.endswith(quote):
            raise FrontMatterError(f"{where}: unterminated {quote} string")
        inner = text[1:-1]
        if quote == "'":
            return inner.replace("''", "'")
        try:
            return inner.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except UnicodeDecodeError as e:
            raise FrontMatterError(f"{where}: bad escape in string: {e.reason}") from e
    if text[0] in "{&*!%@`":
        raise FrontMatterError(
            f"{where}: unsupported YAML ({text[0]!r}); quote the value if it is text"
        )
    # Plain scalars end at a comment.
    return re.sub(r"\s+#.*$", "", text)


def _inline_list(raw: str, where: str) -> list[str]:
    inner = raw.strip()[1:-1].strip()
    if not inner:
        return []
    return [_scalar(item, where) for item in inner.split(",")]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


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


def parse(text: str, path: Path) -> Document:
    """Parse a SKILL.md: its front matter fields and its body (front matter stripped)."""
    lines, body, _ = split_front_matter(text, path)
    fields: dict[str, Value] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f"{path}:{i + 2}"
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        if "\t" in line[: _indent(line) + 1]:
            raise FrontMatterError(f"{where}: tabs are not allowed for indentation")
        if _indent(line):
            raise FrontMatterError(f"{where}: unexpected indentation")
        m = _KEY_RE.match(line)
        if m is None:
            raise FrontMatterError(f"{where}: expected 'key: value', got {line.strip()!r}")
        key, raw = m.group(1), (m.group(2) or "").strip()
        if key in fields:
            raise FrontMatterError(f"{where}: duplicate key '{key}'")
        i += 1
        # Continuation lines: everything more indented than the key.
        block: list[tuple[int, str]] = []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > 0):
            block.append((i + 2, lines[i]))
            i += 1
        while block and not block[-1][1].strip():
            block.pop()
        fields[key] = _value(raw, block, where, path)
    return Document(fields, body)


def _value(raw: str, block: list[tuple[int, str]], where: str, path: Path) -> Value:
    if raw[:1] in ("|", ">"):
        if raw.rstrip("-+") not in ("|", ">"):
            raise FrontMatterError(f"{where}: unsupported block indicator {raw!r}")
        indent = min((_indent(t) for _, t in block if t.strip()), default=0)
        texts = [t[indent:] if t.strip() else "" for _, t in block]
        if raw.startswith("|"):
            return "\n".join(texts).strip()
        # Folded: lines join with spaces; a blank line is a line break (YAML's rule).
        paragraphs = re.split(r"\n[ \t]*\n", "\n".join(texts).strip())
        return "\n".join(" ".join(p.split("\n")) for p in paragraphs)
    if raw.startswith("["):
        if not raw.endswith("]"):
            raise FrontMatterError(f"{where}: unterminated [ list")
        if block:
            raise FrontMatterError(f"{path}:{block[0][0]}: unexpected indented line")
        return _inline_list(raw, where)
    if raw:
        if block:
            # A plain scalar folded over several lines.
            return " ".join([_scalar(raw, where), *(_scalar(t, where) for _, t in block)])
        return _scalar(raw, where)
    items = [(n, t.strip()) for n, t in block if t.strip() and not t.strip().startswith("#")]
    if not items:
        return ""
    if all(t.startswith("- ") or t == "-" for _, t in items):
        return [_scalar(t[1:], f"{path}:{n}") for n, t in items]
    mapping: dict[str, str] = {}
    for n, t in items:
        m = _KEY_RE.match(t)
        if m is None:
            raise FrontMatterError(
                f"{path}:{n}: expected '- item' or 'key: value' under the key, got {t!r}"
            )
        mapping[m.group(1)] = _scalar(m.group(2) or "", f"{path}:{n}")
    return mapping
