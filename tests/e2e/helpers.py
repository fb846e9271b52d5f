"""Run the real `aistack` console script as a subprocess against the fake LLM server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

AISTACK = [sys.executable, "-m", "aistack_tui.cli.main"]
FAST_RETRY = {"retry": {"base_delay": 0.01, "max_delay": 0.05}}


def write_user_settings(home: Path, data: dict[str, Any]) -> None:
    path = home / "settings.json"
    existing = json.loads(path.read_text()) if path.exists() else {}
    existing.update(data)
    path.write_text(json.dumps(existing))


def run_aistack(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [*AISTACK, *args],
        cwd=cwd,
        env=full_env,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


RESULT_KEYS = {
    "type": str,
    "subtype": str,
    "is_error": bool,
    "result": str,
    "session_id": str,
    "num_turns": int,
    "duration_ms": int,
    "duration_api_ms": int,
    "usage": dict,
    "permission_denials": list,
}


def assert_result_shape(obj: dict[str, Any]) -> None:
    """The `result` object of docs/print-mode.md, field by field."""
    for key, kind in RESULT_KEYS.items():
        assert key in obj, f"missing {key}"
        assert isinstance(obj[key], kind), f"{key} is {type(obj[key]).__name__}"
    assert obj["type"] == "result"
    assert obj["subtype"] in ("success", "error_max_turns", "error_during_execution")
    assert set(obj["usage"]) == {
        "input_tokens", "output_tokens", "cache_read_input_tokens",
        "cache_creation_input_tokens",
    }
    assert obj["total_cost_usd"] is None or isinstance(obj["total_cost_usd"], float)
    for denial in obj["permission_denials"]:
        assert set(denial) == {"tool_name", "tool_use_id", "tool_input"}


def assert_stream_json_shape(lines: list[dict[str, Any]]) -> None:
    init = lines[0]
    assert init["type"] == "system" and init["subtype"] == "init"
    for key in ("session_id", "cwd", "model", "tools", "mcp_servers", "permission_mode"):
        assert key in init, key
    assert isinstance(init["tools"], list) and "Read" in init["tools"]
    for line in lines[1:-1]:
        assert line["type"] in ("assistant", "user"), line
        assert line["session_id"] == init["session_id"]
        message = line["message"]
        assert message["role"] == line["type"]
        for block in message["content"]:
            assert block["type"] in ("text", "tool_use", "tool_result", "thinking", "image")
            if block["type"] == "tool_use":
                assert {"id", "name", "input"} <= set(block)
            if block["type"] == "tool_result":
                assert {"tool_use_id", "content", "is_error"} <= set(block)
        if line["type"] == "assistant":
            assert "model" in message
    assert_result_shape(lines[-1])
