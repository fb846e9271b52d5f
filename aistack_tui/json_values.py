"""Typed views of parsed JSON: narrow a value to a JSON object, array or list of strings.

`json.loads` (and SDK error bodies, settings dicts) hand back `Any`; `isinstance(x, dict)`
then yields a dict of unknown keys and values, which strict type checking refuses to let
spread. These helpers are the one place that names what a parsed value is, so callers
get `dict[str, object]` / `list[object]` and narrow each field they actually read.
"""

# pyright: strict

from __future__ import annotations

from typing import cast


def as_object(value: object) -> dict[str, object] | None:
    """`value` if it is a JSON object, else None (keys of parsed JSON are strings)."""
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


def as_list(value: object) -> list[object] | None:
    """`value` if it is a JSON array, else None."""
    return cast("list[object]", value) if isinstance(value, list) else None


def as_str_list(value: object) -> list[str] | None:
    """`value` if it is an array of strings only, else None."""
    items = as_list(value)
    if items is None or not all(isinstance(item, str) for item in items):
        return None
    return cast("list[str]", items)
