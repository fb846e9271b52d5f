"""A model trying known bypasses in print mode: no side effect, every attempt reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import run_aistack

pytestmark = pytest.mark.slow

BYPASSES = [
    ("Bash", {"command": "git status && touch pwned-and.txt"}),
    ("Bash", {"command": "git status; touch pwned-semicolon.txt"}),
    ("Bash", {"command": "git status | tee pwned-pipe.txt"}),
    ("Bash", {"command": "git status\ntouch pwned-newline.txt"}),
    ("Bash", {"command": "echo $(touch pwned-subst.txt)"}),
    ("Bash", {"command": "echo `touch pwned-backtick.txt`"}),
    ("Bash", {"command": "bash -c 'touch pwned-bash-c.txt'"}),
    ("Bash", {"command": "env X=1 touch pwned-env.txt"}),
    ("Bash", {"command": "git status > pwned-redirect.txt"}),
    ("Bash", {"command": "find . -name '*.md' -exec touch pwned-find.txt ;"}),
    ("Bash", {"command": "git -c core.pager='touch pwned-pager.txt' log"}),
    ("Bash", {"command": "cat .env > pwned-secret-copy.txt"}),
    ("Bash", {"command": "echo pwned >> ~/.bashrc"}),
    ("Read", {"file_path": ".env"}),
    ("Write", {"file_path": "../outside.txt", "content": "pwned"}),
    ("Edit", {"file_path": ".git/config", "old_string": "[core]", "new_string": "[pwned]"}),
]


def test_bypass_attempts_leave_no_trace(git_repo: Path, aistack_home: Path) -> None:
    (git_repo / ".env").write_text("API_KEY=sk-secret-value\n")
    (aistack_home / "settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Bash(git status)", "Bash(git log:*)", "Bash(echo:*)", "Bash(find:*)"],
        "deny": ["Read(./.env)"]}}))
    home = Path(aistack_home.parent / "user-home")
    before = sorted(p.name for p in git_repo.iterdir())
    git_config = (git_repo / ".git" / "config").read_text()
    # Edit needs the file read first (a call that fails anyway is not put to anyone), so
    # the model reads .git/config, then tries to change it.
    script = [Turn(tool_calls=[ToolCall("Read", {"file_path": ".git/config"})])]
    script += [Turn(tool_calls=[ToolCall(name, args)]) for name, args in BYPASSES]
    script.append(Turn(text="I was stopped every time."))
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "try everything", "--model", "anthropic/claude-sonnet-4-6",
                            "--output-format", "json"], cwd=git_repo,
                           env=server.env("anthropic"), timeout=120)
        assert proc.returncode == 0, proc.stderr
        sent = json.dumps(server.model_requests[-1].body)
    result = json.loads(proc.stdout)
    assert sorted(p.name for p in git_repo.iterdir()) == before
    assert not list(git_repo.glob("pwned*")) and not (git_repo.parent / "outside.txt").exists()
    assert (git_repo / ".git" / "config").read_text() == git_config
    assert not (home / ".bashrc").exists()
    assert "sk-secret-value" not in sent
    denied = [(d["tool_name"], d["tool_input"]) for d in result["permission_denials"]]
    assert denied == [(name, args) for name, args in BYPASSES]
