"""What the installed provider SDKs say about models, read offline.

Each SDK is regenerated from its provider's API spec on every release, so its model type
is the freshest list of model ids this machine has without a network, and its own
deprecation data says which of them are on the way out:

- anthropic: `anthropic.types.ModelParam` and `anthropic._data.DEPRECATED_MODELS` (the
  table behind the SDK's own runtime warning; there is no public equivalent);
- openai: `openai.types.shared.ChatModel`, whose docstring lists the deprecated ids with
  their announced shutdown dates (the SDK keeps no table of them in code);
- google-genai: `google.genai.interactions.ModelParam` (no deprecation data).

Importing an SDK costs a second or more, so callers ask only for the provider in use,
and every answer is computed once per process. The deprecation data, which every session
start consults, is read from the SDKs' source files without importing them (the lean
transport imports no SDK, and this check alone cost `import anthropic`, ~1.3 s).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
import typing
from pathlib import Path
from typing import Any

_TYPES = {
    "anthropic": ("anthropic.types", "ModelParam"),
    "openai": ("openai.types.shared", "ChatModel"),
    "google": ("google.genai.interactions", "ModelParam"),
}
_MONTHS = {
    name: i
    for i, name in enumerate(
        ("january", "february", "march", "april", "may", "june", "july", "august",
         "september", "october", "november", "december"),
        start=1,
    )
}
_WRITTEN_DATE = re.compile(r"([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")
_SHUTDOWN = re.compile(r"shutdown\s+date:\s*(\d{4}-\d{2}-\d{2})", re.IGNORECASE)


@functools.cache
def sdk_models(kind: str) -> tuple[str, ...]:
    """The model ids the installed SDK of `kind` (anthropic, openai, google) names, in
    its order; empty for other kinds or when the SDK or its type is missing."""
    where = _TYPES.get(kind)
    if where is None:
        return ()
    try:
        alias: Any = getattr(importlib.import_module(where[0]), where[1])
    except (ImportError, AttributeError):
        return ()
    return tuple(dict.fromkeys(_literals(alias)))


def _literals(tp: Any) -> list[str]:
    if typing.get_origin(tp) is typing.Literal:
        return [a for a in typing.get_args(tp) if isinstance(a, str)]
    found: list[str] = []
    for arg in typing.get_args(tp):
        found += _literals(arg)
    return found


@functools.cache
def sdk_deprecations(kind: str) -> dict[str, str | None]:
    """Deprecated model ids the installed SDK of `kind` names → the ISO date it stops
    working (None when the SDK names no date)."""
    if kind == "anthropic":
        return _anthropic_deprecations()
    if kind == "openai":
        return _openai_deprecations()
    return {}


def sdk_source(package: str, *parts: str) -> str | None:
    """The text of a module of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        try:
            return Path(root, *parts).read_text(encoding="utf-8")
        except OSError:
            continue
    return None


def _anthropic_deprecations() -> dict[str, str | None]:
    """`anthropic._data.DEPRECATED_MODELS`, a dict literal, read from its source."""
    source = sdk_source("anthropic", "_data", "deprecated_models.py")
    table = _literal_after(source, "DEPRECATED_MODELS") if source else None
    if not isinstance(table, dict):
        return {}
    items: dict[Any, Any] = table  # pyright: ignore[reportUnknownVariableType]
    return {str(model): parse_written_date(str(when)) for model, when in items.items()}


def _literal_after(source: str, name: str) -> object:
    """The literal value assigned to `name` at the top of a module, or None."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    for node in body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                return ast.literal_eval(value)
            except ValueError:
                return None
    return None


def parse_written_date(text: str) -> str | None:
    """`November 30th, 2026` → `2026-11-30`; None when it is not such a date."""
    match = _WRITTEN_DATE.search(text)
    if match is None or match.group(1).lower() not in _MONTHS:
        return None
    month = _MONTHS[match.group(1).lower()]
    return f"{int(match.group(3)):04d}-{month:02d}-{int(match.group(2)):02d}"


def _openai_deprecations() -> dict[str, str | None]:
    source = sdk_source("openai", "types", "shared", "chat_model.py")
    if source is None:
        return {}
    try:
        doc = _docstring_after(source, "ChatModel")
    except SyntaxError:
        return {}
    return parse_openai_deprecations(doc) if doc else {}


def _docstring_after(source: str, name: str) -> str | None:
    """The string literal right after the assignment of `name` (how the SDK documents
    a type alias; Python keeps no such docstring at run time)."""
    body = ast.parse(source).body
    for i, node in enumerate(body[:-1]):
        targets = (
            node.targets if isinstance(node, ast.Assign)
            else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            nxt = body[i + 1]
            if (isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str)):
                return nxt.value.value
    return None


def parse_openai_deprecations(doc: str) -> dict[str, str | None]:
    """Parse the `Deprecated values:` list of an OpenAI SDK type docstring:
    `- "gpt-5", "o3": Announced shutdown date: 2026-12-11. See …`."""
    _, found, rest = doc.partition("Deprecated values:")
    if not found:
        return {}
    deprecated: dict[str, str | None] = {}
    for item in re.split(r"\n\s*-\s+", "\n" + rest):
        text = " ".join(item.split())
        names, sep, reason = text.partition('":')
        if not sep:
            continue
        date = _SHUTDOWN.search(reason)
        for model in re.findall(r'"([^"]+)"', names + '"'):
            deprecated[model] = date.group(1) if date else None
    return deprecated
