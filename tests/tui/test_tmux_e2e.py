"""End to end in a real terminal: `aistack` in tmux against the fake LLM server process.

Type a prompt, approve the edit with `y`, see the answer, quit with Ctrl+C twice, find
the file changed on disk and the session's resume command printed on the terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from aistack_tui.tui.typing_guard import DIALOG_GRACE_S

ROOT = Path(__file__).resolve().parents[2]
AISTACK = Path(sys.executable).parent / "aistack"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def _tmux(*args: str) -> str:
    done = subprocess.run(["tmux", *args], capture_output=True, text=True, check=False)
    return done.stdout


@pytest.fixture
def fake_server_process(tmp_path: Path) -> Iterator[int]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "Read", "input": {"file_path": "a.py"}}]},
        {"text": "Changing it.", "tool_calls": [{"name": "Edit", "input": {
            "file_path": "a.py", "old_string": "return 1", "new_string": "return 2"}}]},
        {"text": "Done editing the file."},
    ]))
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.fake_llm", "--script", str(script),
         "--port-file", str(port_file)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while not port_file.exists():
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("the fake LLM server did not start")
            time.sleep(0.05)
        yield int(port_file.read_text())
    finally:
        proc.terminate()
        proc.wait(10)


def wait_screen(session: str, check: Callable[[str], bool], timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", session)
        if check(screen):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"timed out; the screen was:\n{screen}")


def test_prompt_approve_edit_and_quit_in_tmux(
    git_repo: Path, aistack_home: Path, fake_server_process: int
) -> None:
    (git_repo / "a.py").write_text("def f():\n    return 1\n")
    session = f"aistack-e2e-{uuid.uuid4().hex[:8]}"
    env = {
        "AISTACK_HOME": str(aistack_home),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{fake_server_process}",
        "ANTHROPIC_API_KEY": "fake-key",
        "HOME": os.environ["HOME"],
        "PATH": os.environ.get("PATH", ""),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }
    exit_file = git_repo.parent / "exit-code"
    command = (
        " ".join(f"{k}='{v}'" for k, v in env.items())
        + f" '{AISTACK}' --model anthropic/claude-sonnet-4-6; echo $? > '{exit_file}'"
        + "; sleep 60"  # keeps the pane, to read what was printed after the app
    )
    _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c", str(git_repo),
          "env -i bash --norc -c " + _quote(command))
    try:
        wait_screen(session, lambda s: "claude-sonnet-4-6" in s and "starting" not in s)
        _tmux("send-keys", "-t", session, "-l", "make f return 2")
        _tmux("send-keys", "-t", session, "Enter")
        wait_screen(session, lambda s: "Allow Edit" in s and "+    return 2" in s)
        time.sleep(DIALOG_GRACE_S)  # read it: sooner, the key would go to the prompt
        _tmux("send-keys", "-t", session, "y")
        wait_screen(session, lambda s: "Done editing the file." in s)
        _tmux("send-keys", "-t", session, "C-c")
        wait_screen(session, lambda s: "Ctrl+C again" in s)
        _tmux("send-keys", "-t", session, "C-c")
        deadline = time.monotonic() + 15
        while not exit_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert exit_file.exists(), "aistack did not exit after Ctrl+C twice"
        assert exit_file.read_text().strip() == "0"
        wait_screen(session, lambda s: "Resume it with: aistack --resume " in s)
    finally:
        _tmux("kill-session", "-t", session)
    assert (git_repo / "a.py").read_text() == "def f():\n    return 2\n"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
