"""The script language of the fake LLM server: turns, tool calls, faults and the record
of each request. Kept apart from the server so the wire renderers and the CLI's JSON
loader can share it without importing uvicorn."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

Provider = Literal["anthropic", "openai", "google"]
FaultKind = Literal["http", "cut", "malformed_tool_json", "in_stream_overloaded", "hang"]
FAULT_KINDS: tuple[str, ...] = (
    "http", "cut", "malformed_tool_json", "in_stream_overloaded", "hang")
Served = Literal["turn", "fault", "exhausted", "unauthorized", "info"]


@dataclass
class ToolCall:
    """One tool call the scripted model makes; several in a turn are parallel calls."""

    name: str
    input: dict[str, Any]
    id: str | None = None  # generated per wire format when None (toolu_…, call_…, …)


@dataclass
class Fault:
    """A failure served instead of a turn, to exercise retry and error paths.

    - ``http``: an error response with ``status`` in the provider's error shape
      (``retry-after`` header when ``retry_after`` is set).
    - ``cut``: a streamed answer whose TCP connection is dropped after ``after_chars``
      characters of text (non-streaming requests get half a body, then the drop).
    - ``malformed_tool_json``: a complete answer whose one tool call (a ``Write``) has
      invalid JSON arguments, ``raw_args`` when given (Gemini: ``finishReason:
      MALFORMED_FUNCTION_CALL``).
    - ``in_stream_overloaded``: HTTP 200, then the provider's in-stream overloaded error.
    - ``hang``: headers, then nothing until the client gives up or the server stops.
    """

    kind: FaultKind
    status: int = 500
    retry_after: float | None = None
    after_chars: int = 5
    raw_args: str | None = None


@dataclass
class Turn:
    """One scripted model answer. ``faults`` are served first, one per request; the turn
    stays at the head of the queue until they are used up. ``usage`` is (input, output)
    with Anthropic's meaning: input excludes ``cache_read_tokens`` (OpenAI's
    ``prompt_tokens`` and Gemini's ``promptTokenCount`` are sent as input + cache read)."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: str = ""
    usage: tuple[int, int] | None = None
    cache_read_tokens: int = 0
    faults: list[Fault] = field(default_factory=list)
    chunk_size: int = 8
    delay: float = 0.0
    respond: Callable[[RecordedRequest], Turn] | None = None
    search: Any = None
    """A ``fake_llm_search.Search``: the answer of the provider's server-side search."""


@dataclass
class RecordedRequest:
    """What the server received and what it answered, for tests to assert on."""

    format: Provider
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or None
    served: Served = "info"
    fault: Fault | None = None
    turn: Turn | None = None  # the turn actually rendered (after ``respond``)
    stream: bool = False

    @property
    def api_key(self) -> str | None:
        """The key in whichever header (or ``?key=``) this provider's SDK used."""
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        return (
            self.headers.get("x-api-key")
            or self.headers.get("x-goog-api-key")
            or self.query.get("key")
        )

    @property
    def is_model_request(self) -> bool:
        """True for requests that consume the script (not count-tokens or model lists)."""
        return self.served in ("turn", "fault", "exhausted")

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly form, written by the CLI's ``--requests-log``."""
        return {
            "format": self.format,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "body": self.body,
            "served": self.served,
            "stream": self.stream,
            "fault": None if self.fault is None else self.fault.kind,
        }


class ScriptError(ValueError):
    """A script file that cannot be turned into turns; the message says where and why."""


def _check_keys(obj: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ScriptError(f"{where}: expected an object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ScriptError(f"{where}: unknown field(s) {', '.join(unknown)}")
    return obj


def _fault_from_json(obj: Any, where: str) -> Fault:
    data = _check_keys(obj, {f.name for f in fields(Fault)}, where)
    if data.get("kind") not in FAULT_KINDS:
        raise ScriptError(f"{where}: kind must be one of {', '.join(FAULT_KINDS)}")
    try:
        return Fault(**data)
    except TypeError as e:
        raise ScriptError(f"{where}: {e}") from e


def turn_from_json(obj: Any, where: str = "turn") -> Turn:
    """Build a Turn from the JSON form used by script files (tool calls and faults as
    objects, usage as a two-item list)."""
    allowed = {f.name for f in fields(Turn)} - {"respond", "search"}
    data = dict(_check_keys(obj, allowed, where))
    calls = data.pop("tool_calls", [])
    faults = data.pop("faults", [])
    if not isinstance(calls, list) or not isinstance(faults, list):
        raise ScriptError(f"{where}: tool_calls and faults must be lists")
    tool_calls = []
    for i, call in enumerate(calls):
        c = _check_keys(call, {"name", "input", "id"}, f"{where}.tool_calls[{i}]")
        if not isinstance(c.get("name"), str) or not isinstance(c.get("input", {}), dict):
            raise ScriptError(f"{where}.tool_calls[{i}]: needs a string name and an object input")
        tool_calls.append(ToolCall(name=c["name"], input=c.get("input", {}), id=c.get("id")))
    usage = data.pop("usage", None)
    if usage is not None:
        if not (isinstance(usage, list) and len(usage) == 2
                and all(isinstance(u, int) for u in usage)):
            raise ScriptError(f"{where}.usage: expected [input_tokens, output_tokens]")
        usage = (usage[0], usage[1])
    try:
        return Turn(
            **data,
            usage=usage,
            tool_calls=tool_calls,
            faults=[_fault_from_json(f, f"{where}.faults[{i}]") for i, f in enumerate(faults)],
        )
    except TypeError as e:
        raise ScriptError(f"{where}: {e}") from e


def load_script(text: str, source: str = "script") -> list[Turn]:
    """Parse a script file's text: a JSON list of turn objects."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScriptError(f"{source}: invalid JSON at line {e.lineno}: {e.msg}") from e
    if not isinstance(data, list):
        raise ScriptError(f"{source}: expected a JSON list of turns")
    return [turn_from_json(t, f"{source}[{i}]") for i, t in enumerate(data)]
