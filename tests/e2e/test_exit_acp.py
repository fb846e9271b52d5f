"""`aistack acp` ends cleanly when the editor goes away mid-turn or a signal arrives: the
turn stops, what completed is stored, nothing is left running, no traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.exits import (
    EXIT_WITHIN,
    FAKES,
    MARK_VAR,
    Watched,
    ended,
    new_mark,
    running_script,
    start,
    stored_roles,
    wait_for,
)
from tests.e2e.helpers import write_user_settings

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc").is_dir(),
                                                    reason="finds leftovers through /proc")]


class Editor:
    """The editor's end of the JSON-RPC connection, line by line."""

    def __init__(self, watched: Watched) -> None:
        assert watched.proc.stdin is not None and watched.proc.stdout is not None
        self.stdin = watched.proc.stdin
        self.stdout = watched.proc.stdout
        self.updates = 0

    def call(self, ident: int, method: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        self.stdin.write((json.dumps(message) + "\n").encode())
        self.stdin.flush()

    def answer(self, ident: int) -> dict[str, Any]:
        while True:
            message = json.loads(self.stdout.readline())
            if message.get("method") == "session/update":
                self.updates += 1
            if message.get("id") == ident:
                assert "result" in message, message
                return message["result"]

    def next_update(self) -> bool:
        return json.loads(self.stdout.readline()).get("method") == "session/update"


def prompting(server: FakeLLMServer, repo: Path, mcp_servers: list[dict[str, Any]] | None = None,
              mark: str | None = None) -> tuple[Watched, Editor]:
    """`aistack acp` with one session whose prompt is streaming its answer."""
    watched = start(["acp"], cwd=repo, env={**server.env("anthropic"),
                                            "AISTACK_MODEL": "anthropic/claude-sonnet-4-6"},
                    stdin=subprocess.PIPE, mark=mark)
    editor = Editor(watched)
    editor.call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    editor.answer(1)
    editor.call(2, "session/new", {"cwd": str(repo), "mcpServers": mcp_servers or []})
    session_id = editor.answer(2)["sessionId"]
    editor.call(3, "session/prompt", {"sessionId": session_id,
                                      "prompt": [{"type": "text", "text": "a long one"}]})
    wait_for(editor.next_update, what="the answer streaming")
    time.sleep(0.3)
    return watched, editor


@pytest.fixture
def slow_server(aistack_home: Path) -> FakeLLMServer:
    write_user_settings(aistack_home, {"memory": False, "knowledge": False})
    return FakeLLMServer([Turn(text="word " * 200, chunk_size=5, delay=0.1)])


def test_editor_disconnecting_mid_turn_ends_acp_cleanly(
    slow_server: FakeLLMServer, git_repo: Path, aistack_home: Path
) -> None:
    with slow_server as server:
        watched, editor = prompting(server, git_repo)
        editor.stdin.close()
        editor.stdout.close()
        gone = time.monotonic()
        end = ended(watched, since=gone, read_stdout=False)
    assert end.status == 0, end.stderr
    assert stored_roles(aistack_home) == ["user", "assistant"]  # the partial answer kept


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_mid_turn_ends_acp_with_the_signal_status(
    signum: int, status: int, slow_server: FakeLLMServer, git_repo: Path, aistack_home: Path
) -> None:
    with slow_server as server:
        watched, _editor = prompting(server, git_repo)
        sent = watched.signal(signum)
        end = ended(watched, since=sent, within=EXIT_WITHIN)
    assert end.status == status, end.stderr
    assert stored_roles(aistack_home) == ["user", "assistant"]


def test_editor_disconnecting_with_a_stubborn_mcp_server_of_its_own_ends_acp_in_time(
    slow_server: FakeLLMServer, git_repo: Path, aistack_home: Path
) -> None:
    mark = new_mark()
    # The editor's own MCP server, started for the session; it ignores SIGTERM and its
    # closed stdin, so only a kill stops it.
    stubborn = {"name": "stubborn", "command": sys.executable,
                "args": [str(FAKES / "mcp_stubborn.py")],
                "env": [{"name": MARK_VAR, "value": mark}]}
    with slow_server as server:
        watched, editor = prompting(server, git_repo, [stubborn], mark)
        assert running_script(mark, "mcp_stubborn.py")
        editor.stdin.close()
        editor.stdout.close()
        gone = time.monotonic()
        end = ended(watched, since=gone, read_stdout=False)
    assert end.status == 0, end.stderr
    assert stored_roles(aistack_home) == ["user", "assistant"]
