"""Sessions across processes (crash, continue, resume) and configuration errors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import AISTACK, FAST_RETRY, run_aistack, write_user_settings

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"


def stored_messages(home: Path, session_id: str | None = None) -> list[dict]:
    db = sqlite3.connect(home / "aistack.db")
    query = "SELECT session_id, role, data FROM session_messages"
    rows = db.execute(query + (" WHERE session_id = ?" if session_id else "") + " ORDER BY rowid",
                      (session_id,) if session_id else ()).fetchall()
    db.close()
    return [{"session_id": s, "role": r, **json.loads(d)} for s, r, d in rows]


def test_sigkill_mid_turn_then_continue(git_repo: Path, aistack_home: Path) -> None:
    (git_repo / "todo.txt").write_text("buy milk\n")
    write_user_settings(aistack_home, FAST_RETRY)
    first = [Turn(tool_calls=[ToolCall("Read", {"file_path": "todo.txt"})]),
             Turn(text="thinking " * 2000, chunk_size=5, delay=0.01)]  # killed during this
    with FakeLLMServer(first) as server:
        proc = subprocess.Popen([*AISTACK, "-p", "what is on my list?", "--model", MODEL],
                                cwd=git_repo, env={**os.environ, **server.env("anthropic")},
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if len(stored_messages(aistack_home)) >= 3:
                    break
            except sqlite3.OperationalError:
                pass  # the database or its tables are still being created
            time.sleep(0.05)
        while len(server.model_requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)  # the second answer is streaming now
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    stored = stored_messages(aistack_home)
    assert [m["role"] for m in stored] == ["user", "assistant", "user"]  # no partial answer
    session_id = stored[0]["session_id"]

    with FakeLLMServer([Turn(text="Your list says: buy milk.")]) as server:
        proc2 = run_aistack(["-p", "-c", "go on", "--model", MODEL, "--output-format", "json"],
                            cwd=git_repo, env=server.env("anthropic"))
        assert proc2.returncode == 0, proc2.stderr
        body = server.model_requests[0].body
    result = json.loads(proc2.stdout)
    assert result["session_id"] == session_id
    sent = json.dumps(body["messages"])
    assert "what is on my list?" in sent and "buy milk" in sent and "go on" in sent
    assert [m["role"] for m in stored_messages(aistack_home, session_id)] == [
        "user", "assistant", "user", "user", "assistant"]


def test_resume_by_id_and_fork(git_repo: Path, aistack_home: Path) -> None:
    with FakeLLMServer([Turn(text="first answer")]) as server:
        proc = run_aistack(["-p", "first", "--model", MODEL, "--output-format", "json"],
                           cwd=git_repo, env=server.env("anthropic"))
    sid = json.loads(proc.stdout)["session_id"]
    with FakeLLMServer([Turn(text="second answer"), Turn(text="forked answer")]) as server:
        resumed = run_aistack(["-p", "-r", sid[:8], "second", "--model", MODEL,
                               "--output-format", "json"], cwd=git_repo, env=server.env("anthropic"))
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["session_id"] == sid
        forked = run_aistack(["-p", "-r", sid, "--fork-session", "third", "--model", MODEL,
                              "--output-format", "json"], cwd=git_repo, env=server.env("anthropic"))
        assert forked.returncode == 0, forked.stderr
        assert "first answer" in json.dumps(server.model_requests[1].body)
    fork_id = json.loads(forked.stdout)["session_id"]
    assert fork_id != sid
    assert len(stored_messages(aistack_home, sid)) == 4
    assert len(stored_messages(aistack_home, fork_id)) == 6
    listing = run_aistack(["sessions"], cwd=git_repo)
    assert listing.returncode == 0 and sid in listing.stdout and fork_id in listing.stdout


def test_resume_unknown_id_exits_2(git_repo: Path) -> None:
    with FakeLLMServer([]) as server:
        proc = run_aistack(["-p", "-r", "nope", "x", "--model", MODEL], cwd=git_repo,
                           env=server.env("anthropic"))
    assert proc.returncode == 2
    assert "nope" in proc.stderr and "Traceback" not in proc.stderr


def test_malformed_settings_exit_2_naming_file_and_line(git_repo: Path) -> None:
    settings = git_repo / ".aistack" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "model": "anthropic/x",\n  "permissions": {,}\n}\n')
    proc = run_aistack(["-p", "hi"], cwd=git_repo, env={"ANTHROPIC_API_KEY": "k"})
    assert proc.returncode == 2
    assert f"{settings}:3:" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_invalid_permission_rule_is_fatal(git_repo: Path) -> None:
    settings = git_repo / ".aistack" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(npm test"]}}))
    proc = run_aistack(["-p", "hi"], cwd=git_repo, env={"ANTHROPIC_API_KEY": "k"})
    assert proc.returncode == 2
    assert "Bash(npm test" in proc.stderr and "settings.json" in proc.stderr


def test_invalid_setting_value_names_key(git_repo: Path, aistack_home: Path) -> None:
    (aistack_home / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "yolo"}}))
    proc = run_aistack(["-p", "hi"], cwd=git_repo, env={"ANTHROPIC_API_KEY": "k"})
    assert proc.returncode == 2
    assert "permissions.defaultMode" in proc.stderr and "settings.json" in proc.stderr


def test_unknown_provider_lists_known(git_repo: Path) -> None:
    proc = run_aistack(["-p", "hi", "--model", "nosuch/model"], cwd=git_repo)
    assert proc.returncode == 2
    for name in ("anthropic", "openai", "google", "ollama"):
        assert name in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_key_names_variables(git_repo: Path) -> None:
    proc = run_aistack(["-p", "hi"], cwd=git_repo)
    assert proc.returncode == 2
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        assert var in proc.stderr
    proc = run_aistack(["-p", "hi", "--model", "openai/gpt-4.1"], cwd=git_repo)
    assert proc.returncode == 2 and "OPENAI_API_KEY" in proc.stderr


def test_bad_flag_exits_2(git_repo: Path) -> None:
    proc = run_aistack(["--output-format", "xml", "-p", "hi"], cwd=git_repo)
    assert proc.returncode == 2 and "xml" in proc.stderr
    assert run_aistack(["-p", "hi", "--max-turns", "0"], cwd=git_repo).returncode == 2


def test_version_and_help(git_repo: Path) -> None:
    proc = run_aistack(["--version"], cwd=git_repo)
    assert proc.returncode == 0 and proc.stdout.startswith("aistack ")
    helped = run_aistack(["--help"], cwd=git_repo)
    assert helped.returncode == 0 and "--output-format" in helped.stdout


def test_doctor_reports_storage_and_keys(git_repo: Path) -> None:
    proc = run_aistack(["doctor"], cwd=git_repo, env={"OPENAI_API_KEY": "k"})
    assert "sqlite fts5" in proc.stdout and "sqlite-vec" in proc.stdout
    assert "[ok  ] provider openai" in proc.stdout
    assert proc.returncode == 0, proc.stdout


def test_project_instructions_reach_the_model(git_repo: Path) -> None:
    (git_repo / "AGENTS.md").write_text("Always answer in haiku. MARKER-AGENTS\n")
    (git_repo / "CLAUDE.md").write_text("MARKER-CLAUDE\n")
    with FakeLLMServer([Turn(text="ok")]) as server:
        proc = run_aistack(["-p", "hi", "--model", MODEL, "--append-system-prompt", "MARKER-APPEND"],
                           cwd=git_repo, env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        system = json.dumps(server.model_requests[0].body["system"])
    assert "MARKER-AGENTS" in system and "MARKER-CLAUDE" in system and "MARKER-APPEND" in system


def test_sessions_export_markdown_and_jsonl(git_repo: Path) -> None:
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),
              Turn(text="The readme has a title.")]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "describe the readme", "--model", MODEL, "--output-format",
                            "json"], cwd=git_repo, env=server.env("anthropic"))
    sid = json.loads(proc.stdout)["session_id"]
    md = run_aistack(["sessions", "export", sid[:8]], cwd=git_repo)
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("# describe the readme")
    assert "**Read**" in md.stdout and "The readme has a title." in md.stdout
    jsonl = run_aistack(["sessions", "export", sid, "--format", "jsonl"], cwd=git_repo)
    rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [r["role"] for r in rows] == ["user", "assistant", "user", "assistant"]
    assert run_aistack(["sessions", "export", "nope"], cwd=git_repo).returncode == 2
