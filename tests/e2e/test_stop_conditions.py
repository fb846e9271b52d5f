"""Stop conditions and the circuit breaker with fallback, in print mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Fault, ToolCall, Turn
from tests.e2e.helpers import run_aistack, write_user_settings

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"
FAST = {"retry": {"base_delay": 0.01, "max_delay": 0.02}}


def run_json(args: list[str], repo: Path, server: FakeLLMServer, provider: str = "anthropic"):
    proc = run_aistack(["-p", "go", "--model", MODEL, "--output-format", "json", *args],
                       cwd=repo, env=server.env(provider))
    return proc, json.loads(proc.stdout)


def reading_turns(n: int, usage: tuple[int, int] = (1000, 100)) -> list[Turn]:
    return [Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})], usage=usage)
            for _ in range(n)] + [Turn(text="never reached")]


def test_token_limit(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST, "limits": {"maxTokens": 2500}})
    with FakeLLMServer(reading_turns(5)) as server:
        proc, result = run_json([], git_repo, server)
    assert proc.returncode == 1
    assert result["subtype"] == "error_during_execution" and result["num_turns"] == 3
    assert "token limit of 2,500" in result["result"] and "token limit" in proc.stderr


def test_cost_limit_flag(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, FAST)
    # claude-sonnet-4-6: $3 per million input tokens: 100k input tokens cost $0.30 a turn.
    with FakeLLMServer(reading_turns(5, usage=(100_000, 10))) as server:
        proc, result = run_json(["--max-budget-usd", "0.5"], git_repo, server)
    assert proc.returncode == 1
    assert result["num_turns"] == 2 and "cost limit of $0.50" in result["result"]
    assert result["total_cost_usd"] >= 0.5


def test_wall_time_limit(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST, "limits": {"maxWallSeconds": 0.5}})
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": "sleep 1"})]), Turn(text="late")]
    with FakeLLMServer(script) as server:
        proc, result = run_json(["--allowed-tools", "Bash(sleep 1)"], git_repo, server)
    assert proc.returncode == 1 and "time limit of 0.5s" in result["result"]
    assert result["num_turns"] == 1


def test_consecutive_tool_failures(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST, "limits": {"maxConsecutiveToolFailures": 3}})
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": f"missing{i}.txt"})])
              for i in range(5)]
    with FakeLLMServer(script) as server:
        proc, result = run_json([], git_repo, server)
    assert proc.returncode == 1
    assert result["num_turns"] == 3 and "3 tool calls failed in a row" in result["result"]


def test_breaker_trips_and_run_continues_on_fallback(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST, "fallbackModel": "openai/gpt-4.1"})
    failing = [Fault(kind="http", status=500) for _ in range(5)]
    with FakeLLMServer([Turn(text="answered by the fallback", faults=failing)]) as server:
        env = {**server.env("anthropic"), **server.env("openai")}
        proc = run_aistack(["-p", "go", "--model", MODEL, "--output-format", "stream-json"],
                           cwd=git_repo, env=env)
        formats = [r.format for r in server.model_requests]
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[-1]["result"] == "answered by the fallback"
    assert formats == ["anthropic"] * 5 + ["openai"]
    assert lines[-2]["message"]["model"] == "gpt-4.1"


def test_without_fallback_exhausted_retries_fail(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {"retry": {"base_delay": 0.01, "max_retries": 2}})
    failing = [Fault(kind="http", status=500) for _ in range(3)]
    with FakeLLMServer([Turn(text="x", faults=failing)]) as server:
        proc, result = run_json([], git_repo, server)
        assert len(server.model_requests) == 3
    assert proc.returncode == 1 and result["is_error"]


def test_router_sends_titles_to_their_model(git_repo: Path,
                                                           aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST, "router": {"title": "openai/gpt-4.1-mini"}})
    with FakeLLMServer([Turn(text="Here is the fix."), Turn(text="Fix flaky upload test")]) as server:
        env = {**server.env("anthropic"), **server.env("openai")}
        proc = run_aistack(["-p", "the upload test is flaky, fix it", "--model", MODEL,
                            "--output-format", "json"], cwd=git_repo, env=env)
        assert proc.returncode == 0, proc.stderr
        formats = [(r.format, r.body.get("model")) for r in server.model_requests]
    assert formats == [("anthropic", "claude-sonnet-4-6"), ("openai", "gpt-4.1-mini")]
    listing = run_aistack(["sessions"], cwd=git_repo)
    assert "Fix flaky upload test" in listing.stdout
