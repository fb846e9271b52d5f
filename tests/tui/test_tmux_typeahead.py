"""Typing is accepted from the first moment: keys typed in the terminal before the first
frame, and a prompt submitted while the session is still opening, reach the model."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.tui.test_tmux_e2e import AISTACK, _quote, _tmux, wait_screen

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_keys_typed_before_the_first_frame_are_sent(git_repo: Path,
                                                    aistack_home: Path) -> None:
    session = f"aistack-typeahead-{uuid.uuid4().hex[:8]}"
    with FakeLLMServer([Turn(text="Answer to the early prompt.")]) as server:
        env = {**server.env("anthropic"), "AISTACK_HOME": str(aistack_home),
               "HOME": os.environ["HOME"], "PATH": os.environ.get("PATH", ""),
               "TERM": "xterm-256color", "LANG": "C.UTF-8"}
        command = " ".join(f"{k}='{v}'" for k, v in env.items()) + (
            f" '{AISTACK}' --model anthropic/claude-sonnet-4-6; sleep 60")
        _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c",
              str(git_repo), "env -i bash --norc -c " + _quote(command))
        try:
            # At once: the app has not drawn anything yet, let alone opened the session.
            _tmux("send-keys", "-t", session, "-l", "typed before the first frame")
            _tmux("send-keys", "-t", session, "Enter")
            wait_screen(session, lambda s: "Answer to the early prompt." in s, timeout=60)
        finally:
            _tmux("kill-session", "-t", session)
        sent = json.dumps(server.model_requests[0].body["messages"])
    assert "typed before the first frame" in sent
