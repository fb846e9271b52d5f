"""The line mode (in a pseudo-terminal) ends cleanly when its terminal closes or SIGTERM
arrives, mid-answer or at the prompt: the turn stops, what completed is stored, nothing
is left running, and the status says which signal (129 hang-up, 143 SIGTERM)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.exits import EXIT_WITHIN, MARK_VAR, marked, new_mark, stored_roles, wait_for
from tests.e2e.helpers import AISTACK, write_user_settings

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc").is_dir(),
                                                    reason="finds leftovers through /proc")]


@pytest.fixture
def server(aistack_home: Path) -> Iterator[FakeLLMServer]:
    write_user_settings(aistack_home, {"retry": {"base_delay": 0.01, "max_delay": 0.05}})
    with FakeLLMServer() as fake:
        yield fake


def spawn(cwd: Path, server: FakeLLMServer, mark: str) -> pexpect.spawn:
    env = {**os.environ, **server.env("anthropic"), "TERM": "xterm-256color", MARK_VAR: mark}
    env.pop("INSIDE_EMACS", None)
    return pexpect.spawn(AISTACK[0], [*AISTACK[1:], "--classic", "--model",
                                      "anthropic/claude-sonnet-4-6", "--no-memory",
                                      "--no-knowledge"],
                         cwd=str(cwd), env=env, encoding="utf-8", timeout=30,
                         dimensions=(40, 120))


def exit_status(child: pexpect.spawn, since: float, within: float) -> int:
    """Wait for the child to be gone; its exit status (an exit, not a death by signal:
    killed by the signal, it would have closed nothing)."""
    wait_for(lambda: not child.isalive(), timeout=within + 10, what="the line mode exiting")
    took = time.monotonic() - since
    assert took < within, f"exit took {took:.1f} s"
    assert child.signalstatus is None, f"killed by signal {child.signalstatus}"
    assert child.exitstatus is not None
    return child.exitstatus


def assert_nothing_left(mark: str) -> None:
    deadline = time.monotonic() + 0.5
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid, _argv in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def streaming(child: pexpect.spawn, server: FakeLLMServer) -> None:
    server.add(Turn(text="word " * 400, chunk_size=5, delay=0.05))
    child.expect_exact("> ")
    child.send("write a lot\r")
    child.expect_exact("word word word")


def test_terminal_closed_mid_answer_stops_saves_and_exits(
    git_repo: Path, server: FakeLLMServer, aistack_home: Path
) -> None:
    mark = new_mark()
    child = spawn(git_repo, server, mark)
    streaming(child, server)
    child.ptyproc.fileobj.close()  # the terminal window closed: the kernel sends SIGHUP
    closed = time.monotonic()
    status = exit_status(child, closed, within=EXIT_WITHIN)
    assert status == 129
    assert_nothing_left(mark)
    assert stored_roles(aistack_home) == ["user", "assistant"]


def test_terminal_closed_at_the_prompt_exits(git_repo: Path, server: FakeLLMServer) -> None:
    mark = new_mark()
    child = spawn(git_repo, server, mark)
    child.expect_exact("> ")
    child.ptyproc.fileobj.close()
    closed = time.monotonic()
    assert exit_status(child, closed, within=EXIT_WITHIN) == 129
    assert_nothing_left(mark)


def test_sigterm_mid_answer_stops_saves_and_exits_143(
    git_repo: Path, server: FakeLLMServer, aistack_home: Path
) -> None:
    mark = new_mark()
    child = spawn(git_repo, server, mark)
    streaming(child, server)
    child.kill(signal.SIGTERM)
    sent = time.monotonic()
    child.expect(pexpect.EOF)
    assert exit_status(child, sent, within=EXIT_WITHIN) == 143
    assert "Traceback" not in str(child.before)
    assert_nothing_left(mark)
    assert stored_roles(aistack_home) == ["user", "assistant"]


def test_ctrl_c_stops_a_shell_command_and_the_line_mode_goes_on(
    git_repo: Path, server: FakeLLMServer
) -> None:
    """Ctrl+C while a `!command` runs stops the command and what it started, and only
    that: the prompt comes back (before, the line mode took it as a quit)."""
    mark = new_mark()
    child = spawn(git_repo, server, mark)
    child.expect_exact("> ")
    child.send("!setsid sleep 44.5 & sleep 45.5\r")
    def sleeping() -> list[int]:
        return [pid for pid, argv in marked(mark) if argv[:1] == ["sleep"]]

    wait_for(lambda: len(sleeping()) == 2, timeout=10, what="the command running")
    child.kill(signal.SIGINT)  # what Ctrl+C sends aistack, in the terminal's foreground
    child.expect_exact("stopped: !setsid sleep 44.5")
    try:
        wait_for(lambda: not sleeping(), timeout=5, what="the command and its child ending")
    finally:
        for pid in sleeping():
            os.kill(pid, signal.SIGKILL)
    server.add(Turn(text="Still here."))
    child.expect_exact("> ")
    child.send("hello\r")
    child.expect_exact("Still here.")
    assert child.isalive()
    child.sendeof()
