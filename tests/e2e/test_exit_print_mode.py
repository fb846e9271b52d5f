"""`aistack -p` ends cleanly whatever ends it: a reader that goes away, SIGINT, SIGTERM,
a provider that dies, an MCP server that will not. Each run must exit within 5 s, print
no traceback, leave no process behind and keep the messages that completed."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Fault, ToolCall, Turn
from tests.e2e.exits import (
    EXIT_WITHIN,
    ended,
    new_mark,
    running,
    running_script,
    start,
    stored_roles,
    stubborn_mcp,
    wait_for,
)
from tests.e2e.helpers import write_user_settings

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc").is_dir(),
                                                    reason="finds leftovers through /proc")]
MODEL = "anthropic/claude-sonnet-4-6"
FORMATS = ["text", "json", "stream-json"]
QUICK = {"retry": {"base_delay": 0.01, "max_delay": 0.05, "max_retries": 1}}


def slow_answer(seconds: float = 20.0) -> Turn:
    """A streamed answer that takes `seconds`: long enough to be stopped mid-way."""
    chunks = 200
    return Turn(text="word " * chunks, chunk_size=5, delay=seconds / chunks)


def args_for(fmt: str, *extra: str) -> list[str]:
    args = ["-p", "write a long answer", "--model", MODEL, "--output-format", fmt,
            "--no-memory", "--no-knowledge", *extra]
    return [*args, "--include-partial-messages"] if fmt == "stream-json" else args


@pytest.fixture(autouse=True)
def quick_retries(aistack_home: Path) -> None:
    write_user_settings(aistack_home, QUICK)


@pytest.mark.parametrize("fmt", FORMATS)
def test_reader_closing_after_the_first_line_ends_the_run_quietly(
    fmt: str, git_repo: Path, aistack_home: Path
) -> None:
    with FakeLLMServer([Turn(text="word " * 100, chunk_size=5, delay=0.01)]) as server:
        watched = start(args_for(fmt), cwd=git_repo, env=server.env("anthropic"))
        assert watched.proc.stdout is not None
        if fmt == "stream-json":
            first = watched.proc.stdout.readline()
            assert json.loads(first)["subtype"] == "init"
        watched.proc.stdout.close()  # text and json write only at the end: to nobody
        wait_for(lambda: server.model_requests, what="the model request")
        asked = time.monotonic()  # the answer streams for about a second from here
        end = ended(watched, since=asked, read_stdout=False)
    assert end.status == 141, end.stderr
    assert stored_roles(aistack_home)[:1] == ["user"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_sigint_mid_stream_stops_keeps_the_partial_answer_and_exits_130(
    fmt: str, git_repo: Path, aistack_home: Path
) -> None:
    with FakeLLMServer([slow_answer()]) as server:
        watched = start(args_for(fmt), cwd=git_repo, env=server.env("anthropic"))
        wait_for(lambda: server.model_requests, what="the model request")
        wait_for(lambda: stored_roles(aistack_home) == ["user"], what="the prompt stored")
        time.sleep(0.8)  # a few chunks of the answer have arrived
        sent = watched.signal(signal.SIGINT)
        end = ended(watched, since=sent, within=EXIT_WITHIN)
    assert end.status == 130, end.stderr
    assert "interrupted" in end.stderr
    assert stored_roles(aistack_home) == ["user", "assistant"]  # the partial answer
    if fmt != "text":
        result = json.loads(end.stdout.splitlines()[-1])
        assert result["type"] == "result"
        assert result["subtype"] == "error_during_execution"


@pytest.mark.parametrize("fmt", FORMATS)
def test_sigterm_mid_tool_call_ends_the_command_and_exits_143(
    fmt: str, git_repo: Path, aistack_home: Path
) -> None:
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": "sleep 30"})]), Turn(text="done")]
    with FakeLLMServer(script) as server:
        watched = start(args_for(fmt, "--allowed-tools", "Bash(sleep 30)"), cwd=git_repo,
                        env=server.env("anthropic"))
        wait_for(lambda: running(watched.mark, "sleep"), what="the Bash command running")
        sent = watched.signal(signal.SIGTERM)
        end = ended(watched, since=sent, within=EXIT_WITHIN)
    assert end.status == 143, end.stderr
    # The call and its (interrupted) result are both kept, so a resume replays cleanly.
    assert stored_roles(aistack_home) == ["user", "assistant", "user"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_provider_killed_mid_stream_fails_the_run_without_a_traceback(
    fmt: str, git_repo: Path, aistack_home: Path
) -> None:
    server = FakeLLMServer([Turn(text="never sent", faults=[Fault("hang")])]).start()
    try:
        watched = start(args_for(fmt), cwd=git_repo, env=server.env("anthropic"))
        wait_for(lambda: server.model_requests, what="the model request")
    finally:
        server.stop()  # the stream in flight is cut, and nobody answers the retries
    cut = time.monotonic()
    end = ended(watched, since=cut)
    assert end.status == 1, end.stderr
    assert "aistack: error:" in end.stderr
    assert stored_roles(aistack_home) == ["user"]


def test_mcp_server_ignoring_sigterm_does_not_hold_the_exit(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    mark = new_mark()
    config = stubborn_mcp(tmp_path, mark)
    with FakeLLMServer([Turn(text="all done")]) as server:
        watched = start(args_for("json", "--mcp-config", str(config)), cwd=git_repo,
                        env=server.env("anthropic"), mark=mark)
        assert watched.proc.stdout is not None
        result = json.loads(watched.proc.stdout.readline())
        answered = time.monotonic()
        end = ended(watched, since=answered, within=EXIT_WITHIN)
    assert end.status == 0, end.stderr
    assert result["result"] == "all done"
    assert stored_roles(aistack_home) == ["user", "assistant"]


def test_sigterm_with_a_stubborn_mcp_server_still_exits_within_two_seconds(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    mark = new_mark()
    config = stubborn_mcp(tmp_path, mark)
    with FakeLLMServer([slow_answer()]) as server:
        watched = start(args_for("stream-json", "--mcp-config", str(config)), cwd=git_repo,
                        env=server.env("anthropic"), mark=mark, stdin=subprocess.DEVNULL)
        wait_for(lambda: server.model_requests, what="the model request")
        sent = watched.signal(signal.SIGTERM)
        end = ended(watched, since=sent, within=EXIT_WITHIN)
    assert end.status == 143, end.stderr
    init = json.loads(end.stdout.splitlines()[0])
    assert init["mcp_servers"] == [{"name": "stubborn", "status": "connected"}]


def test_sigterm_while_waiting_for_a_hung_mcp_server_at_start_exits_143(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    mark = new_mark()
    config = stubborn_mcp(tmp_path, mark, "mcp_silent.py")  # never finishes its handshake
    with FakeLLMServer([Turn(text="never asked")]) as server:
        watched = start(args_for("json", "--mcp-config", str(config)), cwd=git_repo,
                        env=server.env("anthropic"), mark=mark)
        wait_for(lambda: running_script(mark, "mcp_silent.py"), what="the MCP server started")
        time.sleep(0.5)  # aistack waits for it before the first turn
        sent = watched.signal(signal.SIGTERM)
        end = ended(watched, since=sent, within=EXIT_WITHIN)
        assert server.model_requests == []
    assert end.status == 143, end.stderr


def test_a_second_signal_exits_at_once_with_the_children_gone(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    mark = new_mark()
    config = stubborn_mcp(tmp_path, mark)  # closing waits on it: the first stop takes > 1 s
    with FakeLLMServer([slow_answer()]) as server:
        watched = start(args_for("stream-json", "--mcp-config", str(config)), cwd=git_repo,
                        env=server.env("anthropic"), mark=mark)
        wait_for(lambda: server.model_requests, what="the model request")
        watched.signal(signal.SIGTERM)
        time.sleep(0.1)
        again = watched.signal(signal.SIGTERM)
        end = ended(watched, since=again)
    assert end.status == 143, end.stderr
    # Ended by the second signal, not by the first one's orderly stop (which says so last)
    # nor by the deadline (which says what it waited for).
    assert "stopped by SIGTERM" not in end.stderr, end.stderr
    assert "did not finish" not in end.stderr, end.stderr
