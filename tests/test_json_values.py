"""Typed views of parsed JSON: each helper passes its shape through and nothing else."""

from __future__ import annotations

import json

from aistack_tui.json_values import as_list, as_object, as_str_list


def test_an_object_passes_and_other_json_values_do_not() -> None:
    parsed = json.loads('{"a": [1, "x"], "b": "s"}')
    assert as_object(parsed) == {"a": [1, "x"], "b": "s"}
    assert as_object(parsed) is parsed, "a view, not a copy"
    assert [as_object(v) for v in ([1], "s", 1, None)] == [None, None, None, None]


def test_an_array_passes_and_an_object_does_not() -> None:
    assert as_list(json.loads("[1, {}]")) == [1, {}]
    assert as_list({"0": 1}) is None
    assert as_list("ab") is None, "a string is not an array of characters"


def test_a_string_list_must_hold_only_strings() -> None:
    assert as_str_list(["Bash(ls)", "Read"]) == ["Bash(ls)", "Read"]
    assert as_str_list([]) == []
    assert as_str_list(["Bash(ls)", 3]) is None
    assert as_str_list("Read") is None
