"""`aistack -p` as a subprocess against the fake LLM server, for each provider."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Fault, ToolCall, Turn
from tests.e2e.helpers import (
    FAST_RETRY,
    assert_result_shape,
    assert_stream_json_shape,
    run_aistack,
    write_user_settings,
)

pytestmark = pytest.mark.slow

MODELS = {
    "anthropic": "anthropic/claude-sonnet-4-6",
    "openai": "openai/gpt-4.1",
    "google": "google/gemini-2.5-pro",
}
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, 'add is broken'\nprint('tests passed')\n"


def fix_task_script() -> list[Turn]:
    """Read the file, fix it, run the tests, answer."""
    return [
        Turn(text="Let me look.", tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Turn(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                                           "new_string": "a + b"})]),
        Turn(tool_calls=[ToolCall("Bash", {"command": "python test_calc.py"})]),
        Turn(text="Fixed: add now adds. The tests pass."),
    ]


@pytest.fixture
def calc_repo(git_repo: Path) -> Path:
    (git_repo / "calc.py").write_text(BUGGY)
    (git_repo / "test_calc.py").write_text(TEST)
    return git_repo


@pytest.mark.parametrize("provider", ["anthropic", "openai", "google"])
def test_multi_turn_fix_task_json(provider: str, calc_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    with FakeLLMServer(fix_task_script()) as server:
        proc = run_aistack(
            ["-p", "fix the add function", "--model", MODELS[provider],
             "--output-format", "json", "--permission-mode", "acceptEdits",
             "--allowed-tools", "Bash(python test_calc.py)"],
            cwd=calc_repo, env=server.env(provider),
        )
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)
        assert_result_shape(result)
        assert result["subtype"] == "success"
        assert result["result"] == "Fixed: add now adds. The tests pass."
        assert result["num_turns"] == 4
        assert result["permission_denials"] == []
        assert result["usage"]["output_tokens"] > 0
        assert (calc_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
        # The model saw the Bash output of the real test run in its last request.
        last = json.dumps(server.model_requests[-1].body)
        assert "tests passed" in last
        assert server.remaining == 0


@pytest.mark.parametrize("provider", ["anthropic", "openai", "google"])
def test_stream_json_envelope(provider: str, calc_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    with FakeLLMServer(fix_task_script()) as server:
        proc = run_aistack(
            ["-p", "fix it", "--model", MODELS[provider], "--output-format", "stream-json",
             "--permission-mode", "acceptEdits", "--allowed-tools", "Bash(python test_calc.py)"],
            cwd=calc_repo, env=server.env(provider),
        )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert_stream_json_shape(lines)
    kinds = [line["type"] for line in lines]
    assert kinds == ["system", "assistant", "user", "assistant", "user", "assistant", "user",
                     "assistant", "result"]
    tool_uses = [b for line in lines if line["type"] == "assistant"
                 for b in line["message"]["content"] if b["type"] == "tool_use"]
    assert [t["name"] for t in tool_uses] == ["Read", "Edit", "Bash"]
    assert lines[0]["model"] == MODELS[provider]


def test_text_output_and_denied_ask(calc_repo: Path, aistack_home: Path) -> None:
    """In print mode an `ask` is denied, the model is told, and the denial is reported."""
    script = [
        Turn(tool_calls=[ToolCall("Bash", {"command": "rm calc.py"})]),
        Turn(text="I could not delete it."),
    ]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "delete calc.py", "--output-format", "json",
                            "--model", MODELS["anthropic"]],
                           cwd=calc_repo, env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)
        assert (calc_repo / "calc.py").exists()
        assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
        assert result["permission_denials"][0]["tool_input"] == {"command": "rm calc.py"}
        told = json.dumps(server.model_requests[-1].body)
        assert "Permission denied" in told


def test_text_format_prints_final_answer_only(calc_repo: Path) -> None:
    with FakeLLMServer([Turn(text="Hello from the model.")]) as server:
        proc = run_aistack(["-p", "hi", "--model", MODELS["openai"]], cwd=calc_repo,
                           env=server.env("openai"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello from the model.\n"


def test_stdin_is_appended_as_context(calc_repo: Path) -> None:
    with FakeLLMServer([Turn(text="ok")]) as server:
        proc = run_aistack(["-p", "summarise this", "--model", MODELS["openai"]],
                           cwd=calc_repo, env=server.env("openai"), stdin="PIPED-CONTENT-42\n")
        assert proc.returncode == 0, proc.stderr
        sent = json.dumps(server.model_requests[0].body)
    assert "summarise this" in sent and "PIPED-CONTENT-42" in sent


def test_max_turns_exits_1_with_subtype(calc_repo: Path) -> None:
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
              Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})])]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "loop", "--max-turns", "1", "--output-format", "json",
                            "--model", MODELS["anthropic"]],
                           cwd=calc_repo, env=server.env("anthropic"))
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert result["num_turns"] == 1


@pytest.mark.parametrize(
    ("fault", "provider"),
    [
        (Fault(kind="http", status=429, retry_after=0.05), "anthropic"),
        (Fault(kind="http", status=529), "anthropic"),
        (Fault(kind="http", status=500), "openai"),
        (Fault(kind="cut", after_chars=4), "openai"),
        (Fault(kind="cut", after_chars=4), "google"),
        (Fault(kind="in_stream_overloaded"), "anthropic"),
        (Fault(kind="http", status=503), "google"),
    ],
)
def test_retryable_faults_are_retried_and_no_tool_runs_twice(
    fault: Fault, provider: str, calc_repo: Path, aistack_home: Path
) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    counter = calc_repo / "count.txt"
    script = [
        Turn(text="Counting once.", faults=[fault],
             tool_calls=[ToolCall("Bash", {"command": "echo x >> count.txt"})]),
        Turn(text="Counted.", faults=[fault]),
    ]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "count", "--output-format", "json", "--model", MODELS[provider],
                            "--allowed-tools", "Bash(echo x >> count.txt)",
                            "--permission-mode", "acceptEdits"],
                           cwd=calc_repo, env=server.env(provider))
        assert proc.returncode == 0, proc.stderr
        assert server.remaining == 0
    assert counter.read_text() == "x\n"
    result = json.loads(proc.stdout)
    db = sqlite3.connect(aistack_home / "aistack.db")
    rows = db.execute("SELECT COUNT(*) FROM session_messages WHERE session_id = ?",
                      (result["session_id"],)).fetchone()
    assert rows[0] == 4  # prompt, tool call, tool result, answer: no partial message stored


@pytest.mark.parametrize(("status", "expected"), [(400, 1), (401, 1)])
def test_non_retryable_error_exits_1(status: int, expected: int, calc_repo: Path,
                                     aistack_home: Path) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    with FakeLLMServer([Turn(text="never", faults=[Fault(kind="http", status=status)])]) as server:
        proc = run_aistack(["-p", "hi", "--output-format", "json", "--model", MODELS["openai"]],
                           cwd=calc_repo, env=server.env("openai"))
        assert len(server.model_requests) == 1  # not retried
    assert proc.returncode == expected
    result = json.loads(proc.stdout)
    assert result["subtype"] == "error_during_execution" and result["is_error"]
    assert "aistack: error:" in proc.stderr


def test_malformed_tool_json_reported_to_model(calc_repo: Path, aistack_home: Path) -> None:
    script = [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})],
             faults=[Fault(kind="malformed_tool_json")]),
        Turn(text="done"),
    ]
    write_user_settings(aistack_home, FAST_RETRY)
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "read", "--model", MODELS["openai"]], cwd=calc_repo,
                           env=server.env("openai"))
        assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"


def test_unrepairable_tool_json_is_answered_with_an_error_naming_it(
    calc_repo: Path, aistack_home: Path
) -> None:
    script = [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})],
             faults=[Fault(kind="malformed_tool_json", raw_args="<<garbage>>")]),
        Turn(text="done"),
    ]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "read", "--model", MODELS["openai"]], cwd=calc_repo,
                           env=server.env("openai"))
        assert proc.returncode == 0, proc.stderr
        told = json.dumps(server.model_requests[-1].body)
    assert proc.stdout.strip() == "done"
    assert "were not valid JSON, so it was not run" in told
    assert "Raw arguments: <<garbage>>" in told
