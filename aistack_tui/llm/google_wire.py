"""Gemini's request JSON as google-genai writes it, for the lean transport.

`GoogleProvider` describes a request as the dicts the SDK validates into `Content` and
`GenerateContentConfig`; the SDK then writes them in the API's spelling. This module
writes the same JSON from the same dicts without importing the SDK (~0.6 s), including
the SDK's own quirks: only the keys it renames are camelCased (`inlineData` but its
`mime_type`, `functionDeclarations` but their `parameters_json_schema`,
`thinkingConfig` but its `include_thoughts`), bytes are base64 text, and
`automatic_function_calling` stays on the client. A test compares the bodies the fake
server receives from both paths.
"""

from __future__ import annotations

import base64
from typing import Any

from aistack_tui.llm.lean_http import ObjectStyle

RESPONSE_STYLE = ObjectStyle(
    camel=True,
    raw=frozenset({"args"}),
    bytes_fields=frozenset({"thought_signature"}),
    enums=frozenset({"finish_reason"}),
)
"""How the stream translator reads Gemini's JSON: `snake_case` attributes on `camelCase`
keys, thought signatures as bytes, the finish reason as an enum, call args as a dict."""

_PART_KEYS = {
    "inline_data": "inlineData",
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "thought_signature": "thoughtSignature",
}
_CONFIG_KEYS = {
    "max_output_tokens": "maxOutputTokens",
    "temperature": "temperature",
    "stop_sequences": "stopSequences",
    "thinking_config": "thinkingConfig",
}


def model_path(model: str) -> str:
    """`gemini-2.5-pro` → `models/gemini-2.5-pro`, as the SDK names a model in a URL."""
    if model.startswith(("models/", "tunedModels/")):
        return model
    return f"models/{model}"


def request_body(contents: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
    """The body of `generateContent` / `streamGenerateContent` for these arguments."""
    body: dict[str, Any] = {"contents": [_content(c) for c in contents]}
    system = config.get("system_instruction")
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}], "role": "user"}
    tools = config.get("tools")
    if tools:
        body["tools"] = [
            {"functionDeclarations": tool["function_declarations"]} for tool in tools
        ]
    generation = {
        wire: config[key] for key, wire in _CONFIG_KEYS.items() if config.get(key) is not None
    }
    if generation:
        body["generationConfig"] = generation
    return body


def _content(content: dict[str, Any]) -> dict[str, Any]:
    return {"parts": [_part(p) for p in content["parts"]], "role": content["role"]}


def _part(part: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in part.items():
        if key == "inline_data":
            value = {"data": _text(value["data"]), "mime_type": value["mime_type"]}
        elif key == "thought_signature":
            value = _text(value)
        out[_PART_KEYS.get(key, key)] = value
    return out


def _text(value: bytes | str) -> str:
    return base64.b64encode(value).decode() if isinstance(value, bytes) else value
