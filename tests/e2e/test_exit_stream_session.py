"""`aistack -p --input-format stream-json` (one session a client drives over stdin) ends
cleanly when stdin closes early, on a signal, and when the client stops reading."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.exits import EXIT_WITHIN, START_WITHIN, Watched, ended, start, stored_roles, wait_for
from tests.e2e.helpers import write_user_settings

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc").is_dir(),
                                                    reason="finds leftovers through /proc")]
ARGS = ["-p", "--input-format", "stream-json", "--output-format", "stream-json",
        "--model", "anthropic/claude-sonnet-4-6", "--no-memory", "--no-knowledge"]


@pytest.fixture(autouse=True)
def quick_retries(aistack_home: Path) -> None:
    write_user_settings(aistack_home, {"retry": {"base_delay": 0.01, "max_delay": 0.05}})


def user(text: str) -> bytes:
    return (json.dumps({"type": "user", "message": {"role": "user", "content": text}})
            + "\n").encode()


def session(server: FakeLLMServer, repo: Path, *extra: str) -> Watched:
    return start([*ARGS, *extra], cwd=repo, env=server.env("anthropic"),
                 stdin=subprocess.PIPE)


def slow_answer() -> Turn:
    return Turn(text="word " * 200, chunk_size=5, delay=0.1)


def test_stdin_closed_right_after_the_prompt_finishes_the_turn_then_exits(
    git_repo: Path, aistack_home: Path
) -> None:
    with FakeLLMServer([Turn(text="the answer")]) as server:
        watched = session(server, git_repo)
        assert watched.proc.stdin is not None
        watched.proc.stdin.write(user("a question"))
        watched.proc.stdin.close()  # while aistack is still starting
        wait_for(lambda: server.model_requests, what="the model request")
        asked = time.monotonic()
        end = ended(watched, since=asked)
    assert end.status == 0, end.stderr
    result = json.loads(end.stdout.splitlines()[-1])
    assert result["type"] == "result" and result["result"] == "the answer"
    assert stored_roles(aistack_home) == ["user", "assistant"]


def test_stdin_closed_before_any_prompt_exits_at_once(git_repo: Path) -> None:
    with FakeLLMServer([]) as server:
        watched = session(server, git_repo)
        assert watched.proc.stdin is not None
        watched.proc.stdin.close()
        end = ended(watched, within=START_WITHIN)  # start-up included
    assert end.status == 0, end.stderr
    assert end.stdout == ""


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_mid_turn_ends_the_session_with_the_partial_answer_kept(
    signum: int, status: int, git_repo: Path, aistack_home: Path
) -> None:
    with FakeLLMServer([slow_answer()]) as server:
        watched = session(server, git_repo, "--include-partial-messages")
        assert watched.proc.stdin is not None and watched.proc.stdout is not None
        watched.proc.stdin.write(user("a long one"))
        watched.proc.stdin.flush()
        seen: list[dict[str, object]] = []
        wait_for(lambda: seen.append(json.loads(watched.proc.stdout.readline()))
                 or any(line.get("type") == "stream_event" for line in seen[-1:]),
                 what="the answer streaming")
        time.sleep(0.3)
        sent = watched.signal(signum)
        end = ended(watched, since=sent, within=EXIT_WITHIN)  # stdin still open: the client is there
    assert end.status == status, end.stderr
    result = json.loads(end.stdout.splitlines()[-1])
    assert result["type"] == "result" and result["subtype"] == "error_during_execution"
    assert stored_roles(aistack_home) == ["user", "assistant"]


def test_client_that_stops_reading_ends_the_session_with_141(
    git_repo: Path, aistack_home: Path
) -> None:
    with FakeLLMServer([slow_answer()]) as server:
        watched = session(server, git_repo, "--include-partial-messages")
        assert watched.proc.stdin is not None and watched.proc.stdout is not None
        watched.proc.stdin.write(user("a long one"))
        watched.proc.stdin.flush()
        assert json.loads(watched.proc.stdout.readline())["subtype"] == "init"
        watched.proc.stdout.close()
        closed = time.monotonic()
        end = ended(watched, since=closed, read_stdout=False)
        watched.proc.stdin.close()
    assert end.status == 141, end.stderr
    assert stored_roles(aistack_home)[:1] == ["user"]
