"""`aistack --classic` (and `TERM=dumb`) in a pseudo-terminal against the fake LLM server:
the line mode end to end, through pexpect as a person at a terminal would drive it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import AISTACK, FAST_RETRY, write_user_settings

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"
BUGGY = "def add(a, b):\n    return a - b\n"
TIMEOUT = 60


@pytest.fixture
def calc_repo(git_repo: Path) -> Path:
    (git_repo / "calc.py").write_text(BUGGY)
    return git_repo


@pytest.fixture
def server(aistack_home: Path) -> Iterator[FakeLLMServer]:
    write_user_settings(aistack_home, FAST_RETRY)
    with FakeLLMServer() as fake:
        yield fake


def spawn(cwd: Path, server: FakeLLMServer, *args: str, term: str = "xterm-256color"
          ) -> pexpect.spawn:
    env = {**os.environ, **server.env("anthropic"), "TERM": term}
    env.pop("INSIDE_EMACS", None)
    env.pop("AISTACK_CLASSIC", None)
    child = pexpect.spawn(AISTACK[0], [*AISTACK[1:], "--model", MODEL, "--no-memory",
                                       "--no-knowledge", *args],
                          cwd=str(cwd), env=env, encoding="utf-8", timeout=TIMEOUT,
                          dimensions=(40, 120))
    child.logfile_read = sys.stdout if os.environ.get("AISTACK_E2E_LOG") else None
    return child


def finish(child: pexpect.spawn) -> int:
    """Ctrl+D at the prompt; the exit status."""
    child.expect_exact("> ")
    child.send("\x04")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None, child.signalstatus
    return child.exitstatus


def edit(old: str, new: str) -> ToolCall:
    return ToolCall("Edit", {"file_path": "calc.py", "old_string": old, "new_string": new})


def test_stream_approve_deny_with_feedback_and_interrupt(
    calc_repo: Path, server: FakeLLMServer
) -> None:
    server.add(
        # 1. a prompt streams
        Turn(text="Hello from the fake model, streaming in small pieces.", chunk_size=4),
        # 2. an edit approved with y
        Turn(text="Reading first.", tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Turn(tool_calls=[edit("a - b", "a + b")]),
        Turn(text="Fixed the sign."),
        # 3. a second edit denied with feedback
        Turn(tool_calls=[edit("a + b", "b + a")]),
        Turn(text="Understood."),
        # 4. an answer slow enough to interrupt
        Turn(text="word " * 400, chunk_size=5, delay=0.05),
    )
    child = spawn(calc_repo, server, "--classic")
    child.expect_exact("> ")
    child.send("say hello\r")
    child.expect_exact("streaming in small pieces.")

    child.expect_exact("> ")
    child.send("fix the add function\r")
    child.expect_exact("allow? ")
    child.send("y\r")
    child.expect_exact("Fixed the sign.")
    assert (calc_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"

    child.expect_exact("> ")
    child.send("now swap the operands\r")
    child.expect_exact("allow? ")
    child.send("n\r")
    child.expect_exact("tell the model what to do instead")
    child.send("leave the order alone\r")
    child.expect_exact("Understood.")
    assert (calc_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    denied = json.dumps(server.model_requests[-1].body)
    assert "The user denied this tool call." in denied
    assert "leave the order alone" in denied

    child.expect_exact("> ")
    child.send("write a lot\r")
    child.expect_exact("word word word")
    child.send("\x03")
    child.expect_exact("interrupted")
    requests = len(server.model_requests)
    assert finish(child) == 0
    assert len(server.model_requests) == requests  # nothing more was asked of the model


def test_a_dumb_terminal_gets_the_line_mode_without_a_flag(
    calc_repo: Path, server: FakeLLMServer
) -> None:
    server.add(Turn(text="Plain **markdown** text."))
    child = spawn(calc_repo, server, "hi there", term="dumb")
    # Raw text as it streamed: no Markdown rendering, no escape sequences.
    child.expect_exact("Plain **markdown** text.")
    assert isinstance(child.before, str) and "\x1b[" not in child.before
    assert finish(child) == 0
    assert "hi there" in json.dumps(server.model_requests[0].body)


def test_ctrl_c_twice_at_the_prompt_quits(calc_repo: Path, server: FakeLLMServer) -> None:
    child = spawn(calc_repo, server, "--classic")
    child.expect_exact("> ")
    child.send("\x03")
    child.expect_exact("press Ctrl+C again")
    child.send("\x03")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert server.model_requests == []


def test_print_mode_asks_on_the_terminal_with_permission_prompt_tty(
    calc_repo: Path, server: FakeLLMServer
) -> None:
    server.add(
        Turn(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Turn(tool_calls=[edit("a - b", "a + b")]),
        Turn(tool_calls=[ToolCall("Bash", {"command": "touch made-by-bash"})]),
        Turn(text="Done."),
    )
    out = calc_repo / "result.json"
    env = {**os.environ, **server.env("anthropic"), "TERM": "xterm-256color"}
    command = " ".join([*AISTACK, "-p", "'fix the add function'", "--model", MODEL,
                        "--output-format", "json", "--permission-prompt", "tty",
                        "--no-memory", "--no-knowledge", ">", str(out)])
    # stdout is a file; the questions use stdin and stderr, the terminal.
    child = pexpect.spawn("/bin/sh", ["-c", command], cwd=str(calc_repo), env=env,
                          encoding="utf-8", timeout=TIMEOUT, dimensions=(40, 120))
    child.expect_exact("Edit calc.py (+1 -1)")  # the question's title, on stderr
    child.expect_exact("allow? ")
    child.send("y\r")
    child.expect_exact("allow? ")
    child.send("n not in this run\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (calc_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert not (calc_repo / "made-by-bash").exists()
    result = json.loads(out.read_text())
    assert result["result"] == "Done."
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    assert "not in this run" in json.dumps(server.model_requests[-1].body)


def test_permission_prompt_tty_needs_a_terminal(calc_repo: Path, server: FakeLLMServer) -> None:
    from tests.e2e.helpers import run_aistack

    proc = run_aistack(["-p", "hi", "--model", MODEL, "--permission-prompt", "tty"],
                       cwd=calc_repo, env=server.env("anthropic"))
    assert proc.returncode == 2
    assert proc.stderr == "aistack: --permission-prompt tty needs a terminal on stdin and stderr\n"
    assert server.model_requests == []
