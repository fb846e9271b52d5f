"""The full-screen TUI (in a pseudo-terminal) ends cleanly when its terminal closes or
SIGTERM arrives mid-answer: the turn stops, its partial answer is stored, nothing is left
running, and the process exits 129 / 143 instead of dying with nothing closed."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pexpect
import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.exits import EXIT_WITHIN, MARK_VAR, new_mark, stored_roles, wait_for
from tests.e2e.helpers import AISTACK, write_user_settings
from tests.e2e.test_exit_line_mode import assert_nothing_left, exit_status

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc").is_dir(),
                                                    reason="finds leftovers through /proc")]


def sessions_opened(home: Path) -> bool:
    try:
        db = sqlite3.connect(home / "aistack.db")
        try:
            return db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] > 0
        finally:
            db.close()
    except sqlite3.Error:
        return False


@pytest.mark.parametrize("how", ["terminal closed", "SIGTERM"])
def test_terminal_closed_or_sigterm_mid_answer_closes_the_tui_session(
    how: str, git_repo: Path, aistack_home: Path
) -> None:
    write_user_settings(aistack_home, {"retry": {"base_delay": 0.01, "max_delay": 0.05}})
    mark = new_mark()
    with FakeLLMServer([Turn(text="word " * 400, chunk_size=5, delay=0.05)]) as server:
        env = {**os.environ, **server.env("anthropic"), "TERM": "xterm-256color",
               MARK_VAR: mark}
        for var in ("INSIDE_EMACS", "AISTACK_CLASSIC"):
            env.pop(var, None)
        child = pexpect.spawn(AISTACK[0], [*AISTACK[1:], "--model",
                                           "anthropic/claude-sonnet-4-6", "--no-memory",
                                           "--no-knowledge"],
                              cwd=str(git_repo), env=env, encoding="utf-8", timeout=30,
                              dimensions=(40, 120))
        wait_for(lambda: sessions_opened(aistack_home), what="the session opened")
        time.sleep(0.5)
        child.send("write a lot\r")
        wait_for(lambda: server.model_requests, what="the model request")
        time.sleep(0.8)  # a few chunks of the answer have arrived
        if how == "SIGTERM":
            child.kill(signal.SIGTERM)
        else:
            child.ptyproc.fileobj.close()  # the terminal window closed: SIGHUP
        sent = time.monotonic()
        if how == "SIGTERM":
            child.expect(pexpect.EOF)
        expected = 143 if how == "SIGTERM" else 129
        assert exit_status(child, sent, within=EXIT_WITHIN) == expected
    assert_nothing_left(mark)
    assert stored_roles(aistack_home) == ["user", "assistant"]
