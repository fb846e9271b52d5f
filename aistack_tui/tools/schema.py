"""Compact JSON schemas for tool specs.

Tool definitions are sent with every request, so their size is a fixed cost on every
turn. Pydantic's schemas spell optional fields as `anyOf: [X, {"type": "null"}]` and add
`title` everywhere; models need neither (an optional field is simply not `required`), so
the built-in tools send the schema with both removed. Nested models are inlined instead
of referenced through `$defs`, which some providers (Gemini) do not accept.
"""

from __future__ import annotations

from typing import Any


def compact_schema(node: Any) -> Any:
    """`node` without titles, and with nullable `anyOf` unions collapsed to the non-null type."""
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        out[key] = (
            compact_schema(value)
            if key != "properties"
            else {name: compact_schema(prop) for name, prop in value.items()}
        )
    options = out.get("anyOf")
    if isinstance(options, list):
        non_null = [o for o in options if o != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(options):
            del out["anyOf"]
            out = {**non_null[0], **out}
    return out


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every local `$ref` replaced by its definition (no recursive models)."""
    defs: dict[str, Any] = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = walk(defs[ref.removeprefix("#/$defs/")])
            return {**target, **{k: walk(v) for k, v in node.items() if k != "$ref"}}
        return {k: walk(v) for k, v in node.items() if k != "$defs"}

    return walk(schema)


class CompactSpec:
    """Mixin for tools whose spec should use the compact schema."""

    @classmethod
    def generate_input_schema(cls) -> dict[str, Any]:
        full: dict[str, Any] = super().generate_input_schema()  # type: ignore[misc]
        return compact_schema(inline_refs(full))
