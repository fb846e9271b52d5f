"""What no user should see: a traceback for an unexpected error, a hang when stderr's
reader went away, a process kept alive by a thread after `main` returned."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.exits import START_WITHIN, ended, start
from tests.e2e.helpers import run_aistack

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc").is_dir(),
                                                    reason="finds leftovers through /proc")]
MODEL = "anthropic/claude-sonnet-4-6"


def test_unexpected_error_is_one_line_naming_the_log_with_the_trace(
    git_repo: Path, aistack_home: Path
) -> None:
    (aistack_home / "aistack.db").mkdir()  # the database cannot be opened
    proc = run_aistack(["-p", "hi", "--model", MODEL], cwd=git_repo,
                       env={"ANTHROPIC_API_KEY": "fake-key"})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    [line] = lines
    assert line.startswith("aistack: unexpected error: StorageError: cannot open database")
    [log] = (aistack_home / "logs").glob("crash-*.log")
    assert str(log) in line
    assert "Traceback" in log.read_text() and "open_database" in log.read_text()


def test_closed_stderr_ends_the_run_quietly(git_repo: Path, tmp_path: Path) -> None:
    # An untrusted project's MCP server: the run says so on stderr before its first turn.
    (git_repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "true"}}}))
    with FakeLLMServer([Turn(text="word " * 100, chunk_size=5, delay=0.02)]) as server:
        watched = start(["-p", "hi", "--model", MODEL, "--no-memory", "--no-knowledge"],
                        cwd=git_repo, env=server.env("anthropic"))
        assert watched.proc.stderr is not None
        watched.proc.stderr.close()
        end = ended(watched, within=START_WITHIN)  # it used to hang for good
    assert end.status == 141
    assert end.stdout == ""


def test_exit_deadline_ends_a_process_a_thread_would_keep_alive() -> None:
    script = textwrap.dedent("""
        import threading, time
        from aistack_tui.shutdown.deadline import after_main, claim_process

        claim_process()
        threading.Thread(target=time.sleep, args=(60,), name="stuck-db").start()
        after_main(0)
    """)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=20)
    assert time.monotonic() - started < 5
    assert proc.returncode == 0
    assert "exit did not finish within 2 s; still running: stuck-db; exiting now" in proc.stderr
