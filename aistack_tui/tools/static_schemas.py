"""Tool input schemas generated ahead of time, so start-up builds no pydantic schema.

Generating a tool's JSON schema means building the pydantic core schema of its args model
(a few ms per model) and then walking it; with about fifteen tools that is a large share
of `aistack -p`'s start-up, for output that only changes when the code does. So the
schemas live in `schemas.json` next to this module, written by

    python -m aistack_tui.tools.static_schemas

and the args models are declared with `defer_build=True`: their validators are built on
the first call of the tool instead of at import.

Each entry carries a fingerprint of the args model (its fields, their annotations,
defaults, descriptions and constraints, nested models included, and the tool class's
bases). An entry whose fingerprint no longer matches is ignored and the schema is
generated as before, so an edited model never sends a stale schema; the test suite
fails until the file is regenerated.
"""

from __future__ import annotations

import hashlib
import json
import typing
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ToolClass = type[Any]
"""A tool class: anything with an `args_model` pydantic model (typed loosely so this
module does not import `tools.base`, which imports it)."""

SCHEMAS_FILE = Path(__file__).parent / "schemas.json"

def tool_key(cls: type[Any]) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_nested_models(arg))
    return found


_DERIVED_CONFIG = frozenset({"validate_by_alias", "validate_by_name"})


def _describe_model(model: type[BaseModel], seen: set[type[BaseModel]], out: list[str]) -> None:
    if model in seen:
        out.append(f"ref {model.__qualname__}")
        return
    seen.add(model)
    out.append(f"model {model.__module__}.{model.__qualname__} doc={model.__doc__!r}")
    # pydantic adds validate_by_alias/validate_by_name to model_config when it builds a
    # model (derived from populate_by_name); left in, the fingerprint would depend on
    # whether some earlier code had validated this model yet.
    config = {k: v for k, v in model.model_config.items() if k not in _DERIVED_CONFIG}
    out.append(repr(sorted((k, repr(v)) for k, v in config.items())))
    for name, info in model.model_fields.items():
        out.append(f"{name}: {info!r}")
        for nested in _nested_models(info.annotation):
            _describe_model(nested, seen, out)


def fingerprint(cls: ToolClass) -> str:
    """What the generated schema depends on, hashed (cheap: no schema is built)."""
    parts = [" ".join(tool_key(base) for base in cls.__mro__)]
    _describe_model(cls.args_model, set(), parts)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@cache
def _load() -> dict[str, Any]:
    try:
        data = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def pregenerated(cls: ToolClass) -> dict[str, Any] | None:
    """The stored schema of `cls`, or None when there is none or it is out of date."""
    entry = _load().get(tool_key(cls))
    if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint(cls):
        return None
    schema = entry.get("schema")
    return schema if isinstance(schema, dict) else None
