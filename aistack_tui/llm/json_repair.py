"""Repair the almost-JSON that models emit as tool-call arguments.

OpenAI-compatible servers (and small local models above all) stream tool arguments as
free text, which now and then arrives with a trailing comma, single quotes, Python
literals, a markdown fence or a missing closing brace. Throwing such a call away costs a
whole turn; repairing the common slips is cheap and safe because the result is still
validated against the tool's schema before anything runs.

When repair fails, `parse_tool_arguments` returns `{}` plus the reason; adapters put the
raw text and the reason into `StreamDone.extra[INVALID_TOOL_INPUT]` keyed by tool-use id,
so the agent can answer that call with an error result telling the model its arguments
were not valid JSON (instead of running the tool with empty arguments).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

INVALID_TOOL_INPUT = "invalid_tool_input"
"""Key of `StreamDone.extra`: `{tool_use_id: {"raw": str, "error": str}}`."""

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_CLOSERS = {"{": "}", "[": "]"}


class JSONRepairError(ValueError):
    """The text could not be turned into JSON."""


def repair_json(text: str) -> Any:
    """Parse `text` as JSON, repairing common model mistakes; raise JSONRepairError."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if not stripped:
        raise JSONRepairError("empty text")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    start = _first_bracket(stripped)
    if start is None:
        raise JSONRepairError(f"not valid JSON: {_preview(text)}")
    candidate = stripped[start:]
    try:
        return json.loads(_rewrite(candidate))
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        # A Python dict literal ({'a': (1, 2)}) that the rewrite could not normalise.
        value = ast.literal_eval(candidate)
        return json.loads(json.dumps(value))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise JSONRepairError(f"not valid JSON: {_preview(text)}") from e


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
    return value, None


def _first_bracket(text: str) -> int | None:
    """Skip prose before the object ("Here are the arguments: {...}")."""
    positions = [p for p in (text.find("{"), text.find("[")) if p >= 0]
    return min(positions) if positions else None


def _preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _rewrite(text: str) -> str:
    """One pass over the text that fixes quoting, literals, commas and closing brackets."""
    out: list[str] = []
    stack: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            literal, i = _read_string(text, i)
            out.append(literal)
            continue
        if ch in "{[":
            stack.append(_CLOSERS[ch])
            out.append(ch)
        elif ch in "}]":
            _drop_trailing_comma(out)
            if _last(out) == ":":
                out.append("null")  # {"content": } → {"content": null}
            if stack:
                # A mismatched closer is the model's typo for the expected one.
                out.append(stack.pop())
            # A closer with nothing open is surplus: drop it.
        elif ch.isdigit() or (ch == "-" and i + 1 < n and text[i + 1].isdigit()):
            j = i + 1
            while j < n and (text[j].isdigit() or text[j] in ".eE+-"):
                j += 1
            out.append(text[i:j])
            i = j
            continue
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append(_PY_LITERALS.get(word, word if word in ("true", "false", "null")
                                        else json.dumps(word)))
            i = j
            continue
        elif ch == "," and _last(out) in (",", "{", "[", ""):
            pass  # doubled or leading comma
        else:
            out.append(ch)
        i += 1
        if not stack and out and out[-1] in "}]":
            break  # trailing prose after the object
    _drop_trailing_comma(out)
    while stack:
        _drop_trailing_comma(out)
        if _last(out) == ":":
            out.append("null")
        out.append(stack.pop())
    return "".join(out)


def _read_string(text: str, start: int) -> tuple[str, int]:
    """Read a string opened by ' or " and return it double-quoted, with the next index.

    An unterminated string (the stream was cut) is closed at the end of the text.
    """
    quote = text[start]
    i = start + 1
    chars: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            # \' is valid in Python strings, not in JSON.
            chars.append("'" if nxt == "'" else ch + nxt)
            i += 2
            continue
        if ch == quote:
            i += 1
            break
        if ch == '"':
            chars.append('\\"')
        elif ch == "\n":
            chars.append("\\n")
        elif ch == "\t":
            chars.append("\\t")
        else:
            chars.append(ch)
        i += 1
    else:
        if chars and chars[-1] == "\\":
            chars.pop()
    return '"' + "".join(chars) + '"', i


def _last(out: list[str]) -> str:
    """The last non-blank token written so far ("" when none)."""
    for token in reversed(out):
        if not token.isspace():
            return token
    return ""


def _drop_trailing_comma(out: list[str]) -> None:
    while out and out[-1].isspace():
        out.pop()
    if out and out[-1] == ",":
        out.pop()
