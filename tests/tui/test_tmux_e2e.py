"""End to end in a real terminal: `aistack` in tmux against the fake LLM server process.

Type a prompt, approve the edit with `y`, see the answer, quit with Ctrl+C twice, find
the file changed on disk and the session's resume command printed on the terminal. And
type a sentence full of `y` and `n` while a tool dialog opens: the dialog takes none of
it, the sentence stays in the prompt (issue 22 item 1).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
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


EDIT_SCRIPT = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "a.py"}}]},
    {"text": "Changing it.", "tool_calls": [{"name": "Edit", "input": {
        "file_path": "a.py", "old_string": "return 1", "new_string": "return 2"}}]},
    {"text": "Done editing the file."},
]


@pytest.fixture
def fake_server_process(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[int]:
    """The fake LLM server in its own process, on the script the test is parametrized
    with (`EDIT_SCRIPT` by default); its requests are logged to `requests.jsonl`."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(getattr(request, "param", EDIT_SCRIPT)))
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakes.fake_llm", "--script", str(script),
         "--port-file", str(port_file), "--requests-log", str(tmp_path / "requests.jsonl")],
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


def busy(screen: str) -> bool:
    """The status line (the last row) shows the agent at work (`● thinking`...)."""
    return "●" in screen.rstrip().splitlines()[-1]


def wait_ready(session: str) -> str:
    """Until the session is open (slow on a loaded machine: SDK imports, the stores)."""
    return wait_screen(session, lambda s: "claude-sonnet-4-6" in s and "starting" not in s,
                       timeout=45)


def start_aistack(git_repo: Path, aistack_home: Path, port: int, exit_file: Path,
                  **extra_env: str) -> str:
    """`aistack` in a new 100x30 tmux session in `git_repo`; returns the session name."""
    session = f"aistack-e2e-{uuid.uuid4().hex[:8]}"
    env = {
        "AISTACK_HOME": str(aistack_home),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "fake-key",
        "HOME": os.environ["HOME"],
        "PATH": os.environ.get("PATH", ""),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        **extra_env,
    }
    command = (
        " ".join(f"{k}='{v}'" for k, v in env.items())
        + f" '{AISTACK}' --model anthropic/claude-sonnet-4-6; echo $? > '{exit_file}'"
        + "; sleep 60"  # keeps the pane, to read what was printed after the app
    )
    _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "-c", str(git_repo),
          "env -i bash --norc -c " + _quote(command))
    return session


def test_prompt_approve_edit_and_quit_in_tmux(
    git_repo: Path, aistack_home: Path, fake_server_process: int
) -> None:
    (git_repo / "a.py").write_text("def f():\n    return 1\n")
    exit_file = git_repo.parent / "exit-code"
    session = start_aistack(git_repo, aistack_home, fake_server_process, exit_file)
    try:
        wait_ready(session)
        _tmux("send-keys", "-t", session, "-l", "make f return 2")
        _tmux("send-keys", "-t", session, "Enter")
        wait_screen(session, lambda s: "Allow Edit" in s and "+    return 2" in s)
        time.sleep(DIALOG_GRACE_S)  # read it: sooner, the key would go to the prompt
        _tmux("send-keys", "-t", session, "y")
        # The answer shows before the turn's end: a Ctrl+C sent then stops the turn.
        wait_screen(session, lambda s: "Done editing the file." in s and not busy(s))
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


SLOW_WRITE = [
    # Streamed slowly, so the Write dialog opens while the user is still typing.
    {"text": "Let me write that file for you now.", "chunk_size": 3, "delay": 0.08,
     "tool_calls": [{"name": "Write", "input": {"file_path": "b.py", "content": "b = 1\n"}}]},
    {"text": "Wrote b.py."},
]
KEY_GAP_S = 0.06  # a brisk typist: every key inside one burst


def type_slowly(session: str, text: str) -> None:
    for char in text:
        _tmux("send-keys", "-t", session, "-l", char)
        time.sleep(KEY_GAP_S)


def prompt_box(screen: str) -> str:
    """The text inside the prompt's box (the last box on the screen), wrapped lines joined."""
    lines = screen.splitlines()
    top = max(i for i, line in enumerate(lines) if line.lstrip().startswith("╭"))
    inside = []
    for line in lines[top + 1:]:
        if line.lstrip().startswith("╰"):
            break
        inside.append(line.strip().strip("│"))
    return " ".join(inside)


def squeeze(text: str) -> str:
    return "".join(text.split())


def dialog_open(session: str) -> bool:
    return "Allow Create b.py" in _tmux("capture-pane", "-p", "-t", session)


@pytest.mark.parametrize("fake_server_process", [SLOW_WRITE], indirect=True)
def test_a_sentence_typed_while_a_dialog_opens_stays_in_the_prompt(
    git_repo: Path, aistack_home: Path, fake_server_process: int, tmp_path: Path
) -> None:
    exit_file = git_repo.parent / "exit-code"
    session = start_aistack(git_repo, aistack_home, fake_server_process, exit_file)
    try:
        wait_ready(session)
        _tmux("send-keys", "-t", session, "-l", "write b.py")
        _tmux("send-keys", "-t", session, "Enter")
        # Keep typing (no y or n yet) until the dialog is up, as a user does who does
        # not watch the screen; then the rest, full of y and n.
        typed = "also please keep the"
        type_slowly(session, typed)
        deadline = time.monotonic() + 20
        while not dialog_open(session):
            assert time.monotonic() < deadline, _tmux("capture-pane", "-p", "-t", session)
            type_slowly(session, " so")
            typed += " so"
        rest = " style consistent, and why not"
        type_slowly(session, rest)
        typed += rest
        time.sleep(0.5)
        screen = _tmux("capture-pane", "-p", "-t", session)
        assert "Allow Create b.py" in screen, "a typed letter answered the dialog"
        assert squeeze(typed) in squeeze(prompt_box(screen)), screen  # behind the dialog
        assert not (git_repo / "b.py").exists()
        requests = [json.loads(line) for line in
                    (tmp_path / "requests.jsonl").read_text().splitlines()]
        model_requests = [r for r in requests if r.get("path") == "/v1/messages"]
        assert len(model_requests) == 1  # nothing answered the call: the model waits
        # A deliberate answer, once the dialog has been read.
        time.sleep(DIALOG_GRACE_S)
        _tmux("send-keys", "-t", session, "y")
        screen = wait_screen(session, lambda s: "Wrote b.py." in s)
        assert squeeze(typed) in squeeze(prompt_box(screen))
    finally:
        _tmux("kill-session", "-t", session)
    assert (git_repo / "b.py").read_text() == "b = 1\n"


READ_NOTES = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
    {"text": "Read them."},
]


def click(session: str, row: int, column: int = 10) -> None:
    """A left click as the terminal reports it (SGR mouse: press, then release)."""
    _tmux("send-keys", "-t", session, "-l", f"\x1b[<0;{column};{row}M")
    time.sleep(0.05)
    _tmux("send-keys", "-t", session, "-l", f"\x1b[<0;{column};{row}m")


@pytest.mark.parametrize("fake_server_process", [READ_NOTES], indirect=True)
def test_a_clicked_tool_card_shows_its_body(
    git_repo: Path, aistack_home: Path, fake_server_process: int
) -> None:
    # Issue 22 item 6: in a real terminal the click opened the card but painted nothing
    # until a resize (a Pilot click did not show it).
    (git_repo / "notes.txt").write_text("note line 1\nnote line 2\nnote line 3\n")
    session = start_aistack(git_repo, aistack_home, fake_server_process,
                            git_repo.parent / "exit-code")
    try:
        wait_ready(session)
        _tmux("send-keys", "-t", session, "-l", "read the notes")
        _tmux("send-keys", "-t", session, "Enter")
        screen = wait_screen(session, lambda s: "Read them." in s)
        row = next(i for i, line in enumerate(screen.splitlines(), 1) if "✓ Read" in line)
        click(session, row)
        wait_screen(session, lambda s: "note line 3" in s, timeout=5)
    finally:
        _tmux("kill-session", "-t", session)


def pane_title(session: str) -> str:
    return _tmux("display-message", "-p", "-t", session, "#{pane_title}").strip()


def test_ctrl_g_hands_the_terminal_to_the_editor_and_the_title_tells_the_state(
    git_repo: Path, aistack_home: Path, fake_server_process: int, tmp_path: Path
) -> None:
    # Issue 22 items 11 and 12, where only a real terminal shows them: the title (OSC 2,
    # tmux's pane title) and the app suspended for the editor, then painted again.
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "from the editor: %s" "$(cat "$1")" > "$1"\n')
    editor.chmod(0o755)
    session = start_aistack(git_repo, aistack_home, fake_server_process,
                            git_repo.parent / "exit-code", VISUAL=str(editor))
    try:
        wait_ready(session)
        deadline = time.monotonic() + 10
        while "aistack: idle" not in pane_title(session):
            assert time.monotonic() < deadline, pane_title(session)
            time.sleep(0.1)
        _tmux("send-keys", "-t", session, "-l", "draft")
        wait_screen(session, lambda s: "draft" in prompt_box(s))
        _tmux("send-keys", "-t", session, "C-g")
        # (While the editor has the terminal, the screen is blank: no prompt box yet.)
        screen = wait_screen(session,
                             lambda s: "╭" in s and "from the editor: draft" in prompt_box(s))
        assert "claude-sonnet-4-6" in screen  # the app is back, status line and all
    finally:
        _tmux("kill-session", "-t", session)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def test_a_big_project_gets_its_code_index_under_the_tui(
    git_repo: Path, aistack_home: Path, fake_server_process: int
) -> None:
    """A first build big enough for the worker pool runs under Textual, whose print
    capture stands in for `sys.stderr` with no file descriptor. Starting the pool there
    failed (multiprocessing's resource tracker is handed stderr's descriptor), and a big
    project got no code index at all in the TUI."""
    from aistack_tui.knowledge.pipeline import POOL_THRESHOLD

    files = POOL_THRESHOLD + 40
    package = git_repo / "pkg"
    package.mkdir()
    for i in range(files):
        (package / f"mod_{i}.py").write_text(f"def handler_{i}(request):\n    return {i}\n")
    exit_file = git_repo.parent / "exit-code"
    session = start_aistack(git_repo, aistack_home, fake_server_process, exit_file)
    indexed = 0
    try:
        wait_ready(session)
        deadline = time.monotonic() + 60
        while indexed < files and time.monotonic() < deadline:
            time.sleep(0.2)
            for db in (aistack_home / "projects").glob("*/index.db"):
                # (An OperationalError: the tables are not created yet.)
                with contextlib.closing(sqlite3.connect(db, timeout=5)) as conn, \
                        contextlib.suppress(sqlite3.OperationalError):
                    indexed = conn.execute(
                        "SELECT count(*) FROM files WHERE path LIKE 'pkg/%'").fetchone()[0]
    finally:
        _tmux("kill-session", "-t", session)
    crashes = [log.read_text() for log in (aistack_home / "logs").glob("*.log")]
    assert not any("index refresh failed" in text for text in crashes), crashes
    assert indexed == files
