"""Repair the almost-JSON that models emit as tool-call arguments, with `json-repair`.

OpenAI-compatible servers (and small local models above all) stream tool arguments as
free text, which now and then arrives with a trailing comma, single quotes, Python
literals, unquoted keys, a markdown fence or a missing closing brace. Throwing such a call
away costs a whole turn; repairing the common slips is cheap and safe because the result
is still validated against the tool's schema before anything runs.

The repair itself is the `json-repair` package. It runs with `stream_stable=True`: by
default the library trims trailing whitespace off a string it had to repair, so a Write
whose arguments only lacked a closing brace would lose the file's final newline (measured:
`{"content": "a\\nb\\n",}` gave "a\\nb"). Valid JSON never reaches the library.

When repair fails, `parse_tool_arguments` returns `{}` plus the reason; adapters put the
raw text and the reason into `StreamDone.extra[INVALID_TOOL_INPUT]` keyed by tool-use id,
so the agent can answer that call with an error result telling the model its arguments
were not valid JSON (instead of running the tool with empty arguments).
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

import json_repair

INVALID_TOOL_INPUT = "invalid_tool_input"
"""Key of `StreamDone.extra`: `{tool_use_id: InvalidToolInput}`."""


class InvalidToolInput(TypedDict):
    """A tool call whose arguments could not be repaired: the text as sent, and why."""

    raw: str
    error: str


class JSONRepairError(ValueError):
    """The text could not be turned into JSON."""


def repair_json(text: str) -> Any:
    """Parse `text` as JSON, repairing common model mistakes; raise JSONRepairError."""
    stripped = text.strip()
    if not stripped:
        raise JSONRepairError("empty text")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    try:
        value = json_repair.loads(stripped, skip_json_loads=True, stream_stable=True)
    except (ValueError, RecursionError) as e:
        raise JSONRepairError(f"not valid JSON: {_preview(text)}") from e
    # The library answers "" when it finds nothing to repair (a real "" parsed above).
    if value == "":
        raise JSONRepairError(f"not valid JSON: {_preview(text)}")
    return value


def parse_tool_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Tool input from streamed argument text: `(input, None)` or `({}, reason)`.

    Empty text means a call without arguments, which some servers send as "".
    """
    if not text.strip():
        return {}, None
    try:
        value = repair_json(text)
    except JSONRepairError as e:
        return {}, str(e)
    if not isinstance(value, dict):
        return {}, f"tool arguments must be a JSON object, got {type(value).__name__}"
    return value, None  # pyright: ignore[reportUnknownVariableType]


def _preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"
