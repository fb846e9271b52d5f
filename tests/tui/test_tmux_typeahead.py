"""Typing is accepted from the first moment: keys typed in the terminal before the first
frame, and a prompt submitted while the session is still opening, reach the model."""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.tui.test_tmux_e2e import AISTACK, ROOT, _quote, _tmux, wait_screen

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def _sent_after_typing(typed: str, program: str, git_repo: Path, aistack_home: Path,
                       **extra_env: str) -> str:
    """Start `program` (a quoted command line) in a tmux pane, type `typed` and Enter at
    once, wait for the fake model's answer and return the messages the model was sent."""
    session = f"aistack-typeahead-{uuid.uuid4().hex[:8]}"
    with FakeLLMServer([Turn(text="Answer to the early prompt.")]) as server:
        env = {**server.env("anthropic"), "AISTACK_HOME": str(aistack_home),
               "HOME": os.environ["HOME"], "PATH": os.environ.get("PATH", ""),
               "TERM": "xterm-256color", "LANG": "C.UTF-8", **extra_env}
        command = " ".join(f"{k}='{v}'" for k, v in env.items()) + (
            f" {program} --model anthropic/claude-sonnet-4-6; sleep 60")
        _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c",
              str(git_repo), "env -i bash --norc -c " + _quote(command))
        try:
            # At once: the app has not drawn anything yet, let alone opened the session.
            _tmux("send-keys", "-t", session, "-l", typed)
            _tmux("send-keys", "-t", session, "Enter")
            wait_screen(session, lambda s: "Answer to the early prompt." in s, timeout=60)
        finally:
            _tmux("kill-session", "-t", session)
        return json.dumps(server.model_requests[0].body["messages"])


def test_keys_typed_before_the_first_frame_are_sent(git_repo: Path,
                                                    aistack_home: Path) -> None:
    sent = _sent_after_typing("typed before the first frame", f"'{AISTACK}'", git_repo,
                              aistack_home)
    assert "typed before the first frame" in sent


HELD_INPUT = """
import fcntl, struct, sys, termios, threading, time

from textual.drivers.linux_driver import LinuxDriver

from aistack_tui.tui.app import AistackApp

# Start only once the line typed at the shell, Enter included, waits in the terminal.
deadline = time.monotonic() + 20
while time.monotonic() < deadline and not struct.unpack(
        "i", fcntl.ioctl(0, termios.FIONREAD, b"0000"))[0]:
    time.sleep(0.02)

# A busy machine: the input thread gets to read the terminal only after the first frame.
first_frame = threading.Event()
on_ready = AistackApp.on_ready


def on_ready_then_read(self):
    on_ready(self)
    first_frame.set()


read_input = LinuxDriver.run_input_thread


def read_input_late(self):
    first_frame.wait(30)
    read_input(self)


AistackApp.on_ready = on_ready_then_read
LinuxDriver.run_input_thread = read_input_late
from aistack_tui.cli.main import main

sys.exit(main(sys.argv[1:]))
"""


def test_a_line_typed_at_the_shell_is_sent_when_the_input_thread_reads_late(
        git_repo: Path, aistack_home: Path, tmp_path: Path) -> None:
    """The line and its Enter reach the terminal before aistack leaves cooked mode, so
    the Enter waits there as a newline (ICRNL); Textual's input thread reads it only
    after the first frame (as under load): the line is still sent, not left in the
    prompt with a new line after it."""
    script = tmp_path / "held_input.py"
    script.write_text(HELD_INPUT)
    sent = _sent_after_typing("typed at the shell", f"'{sys.executable}' '{script}'",
                              git_repo, aistack_home, PYTHONPATH=str(ROOT))
    assert "typed at the shell" in sent
