"""Background shells end with `aistack -p`: when the run ends, and when it is SIGKILLed."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Fault, ToolCall, Turn
from tests.e2e.helpers import AISTACK, FAST_RETRY, run_aistack, write_user_settings

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"


def start_turn(marker: str) -> Turn:
    """A Bash call starting a shell that forks a child: both carry `marker` in their
    command lines (the sandbox's pid namespace hides their real pids from the script)."""
    command = f"sleep {marker} & wait"
    return Turn(tool_calls=[ToolCall("Bash", {"command": command, "run_in_background": True})])


def processes(marker: str) -> list[int]:
    """Host pids of live processes whose command line holds `marker`."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def wait_for(marker: str, seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = processes(marker)
        if len(found) >= 2:  # the shell and its child (and bwrap, when sandboxed)
            return found
        time.sleep(0.05)
    raise AssertionError("the background shell never started")


def all_gone(marker: str, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not processes(marker):
            return True
        time.sleep(0.05)
    return False


def unique_marker() -> str:
    return f"{300 + random.random():.9f}"


def test_background_shell_ends_with_the_run(git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    marker = unique_marker()
    with FakeLLMServer([start_turn(marker), Turn(text="started it")]) as server:
        proc = run_aistack(["-p", "start the server", "--model", MODEL,
                            "--permission-mode", "bypassPermissions"], cwd=git_repo,
                           env=server.env("anthropic"))
    assert proc.returncode == 0, proc.stderr
    assert "bash_1" in server.model_requests[1].body["messages"][-1]["content"][0]["content"]
    assert all_gone(marker)


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_background_shell_ends_when_aistack_is_sigkilled(git_repo: Path, aistack_home: Path,
                                                        sandbox: str) -> None:
    """Under bubblewrap and unconfined alike: the lifeline, not a `finally`, ends them."""
    write_user_settings(aistack_home, {**FAST_RETRY, "sandbox": sandbox})
    marker = unique_marker()
    # The second request hangs: aistack is alive, waiting, when it is killed.
    script = [start_turn(marker), Turn(text="never", faults=[Fault(kind="hang")])]
    with FakeLLMServer(script) as server:
        proc = subprocess.Popen([*AISTACK, "-p", "start the server", "--model", MODEL,
                                 "--permission-mode", "bypassPermissions"],
                                cwd=git_repo, env={**os.environ, **server.env("anthropic")},
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_for(marker)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            assert all_gone(marker), f"outlived aistack: {processes(marker)}"
        finally:
            if proc.poll() is None:
                proc.kill()
