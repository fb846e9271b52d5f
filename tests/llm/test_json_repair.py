"""Tool-argument JSON from models is repaired when the slip is a common one, and
reported (not guessed) when it is not."""

from __future__ import annotations

import pytest

from aistack_tui.llm.json_repair import (
    INVALID_TOOL_INPUT,
    JSONRepairError,
    parse_tool_arguments,
    repair_json,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('{"a": 1,}', {"a": 1}),
        ('{"a": [1, 2,],}', {"a": [1, 2]}),
        ('{"path": "src/x.py"', {"path": "src/x.py"}),
        ('{"path": "src/x.py', {"path": "src/x.py"}),
        ('{"a": {"b": [1, {"c": 2', {"a": {"b": [1, {"c": 2}]}}),
        ("{'a': 'it\\'s', 'b': True, 'c': None, 'd': False}",
         {"a": "it's", "b": True, "c": None, "d": False}),
        ('```json\n{"x": 1e3, "y": -2.5}\n```', {"x": 1000.0, "y": -2.5}),
        ('```\n{"x": 1}\n```', {"x": 1}),
        ('Here you go: {"x": "y"} hope that helps', {"x": "y"}),
        ('{"a": 1}}', {"a": 1}),
        # A key whose value never came gets "" from json-repair (the schema still decides).
        ('{"a":', {"a": ""}),
        ('{"q": "say \\"hi\\"", "n": "line\nbreak"}', {"q": 'say "hi"', "n": "line\nbreak"}),
        ("{command: 'ls -la'}", {"command": "ls -la"}),
        ('{"path": "notes.txt",, "content": }', {"path": "notes.txt", "content": ""}),
        # A repaired string keeps its trailing whitespace: a file's last newline survives.
        ('{"content": "a\\nb\\n",}', {"content": "a\nb\n"}),
        ('{"path": "f.py", "content": "x = 1\\n\\n', {"path": "f.py", "content": "x = 1\n\n"}),
        ('{"content": "keep  ", "n": 1,}', {"content": "keep  ", "n": 1}),
        ("{'old_string': 'a, b',\n 'new_string': 'c',}", {"old_string": "a, b", "new_string": "c"}),
        ('{"unicode": "héllo ✓"}', {"unicode": "héllo ✓"}),
    ],
)
def test_common_slips_are_repaired(text: str, expected: dict) -> None:
    assert parse_tool_arguments(text) == (expected, None)


def test_empty_arguments_mean_no_arguments() -> None:
    assert parse_tool_arguments("") == ({}, None)
    assert parse_tool_arguments("  \n") == ({}, None)


@pytest.mark.parametrize("text", ["not json at all", "[1, 2, 3]", '"just a string"', "42"])
def test_unrepairable_or_non_object_arguments_are_reported(text: str) -> None:
    arguments, error = parse_tool_arguments(text)
    assert arguments == {}
    assert error


def test_repair_json_raises_a_clear_error() -> None:
    with pytest.raises(JSONRepairError, match="not valid JSON"):
        repair_json("definitely not json")
    with pytest.raises(JSONRepairError, match="empty"):
        repair_json("  \n")
    with pytest.raises(JSONRepairError, match="not valid JSON"):
        repair_json("```json\n```")


def test_unrepairable_stream_arguments_are_marked_in_stream_done() -> None:
    """The OpenAI adapter assembles fragments with the SDK's own chunk type; arguments
    that cannot be repaired give input {} and an entry under INVALID_TOOL_INPUT."""
    from openai.types.chat import ChatCompletionChunk

    from aistack_tui.llm.openai import _StreamState

    def chunk(delta: dict, finish: str | None = None) -> ChatCompletionChunk:
        return ChatCompletionChunk.model_validate({
            "id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })

    state = _StreamState()
    state.handle(chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                        "function": {"name": "Bash", "arguments": "<<"}}]}))
    state.handle(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "garbage>>"}}]}))
    state.handle(chunk({}, finish="tool_calls"))
    (ended,) = state.finish()
    assert ended.input == {}
    assert state.invalid == {"call_1": {"raw": "<<garbage>>", "error": state.invalid["call_1"]
                                        ["error"]}}
    assert "not valid JSON" in state.invalid["call_1"]["error"]
    assert INVALID_TOOL_INPUT == "invalid_tool_input"
    assert state.stop_reason == "tool_use"
