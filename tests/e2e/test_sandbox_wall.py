"""`aistack -p` end to end: what the parser lets through, the kernel still stops.

A rule such as `Bash(python3:*)` lets a program do anything the parser cannot see; the
sandbox (on by default) keeps protected paths read-only and denied paths masked for it.
The Bash tool's `cd` carries over between calls, and the engine judges each command from
the directory it will really run in.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import run_aistack
from tests.sandbox.test_sandbox import needs_bwrap

pytestmark = pytest.mark.slow

MODEL = ["--model", "anthropic/claude-sonnet-4-6", "--output-format", "json"]


def _tool_results(server: FakeLLMServer) -> str:
    return json.dumps(server.model_requests[-1].body)


@needs_bwrap
def test_a_program_allowed_by_a_rule_cannot_touch_protected_or_denied_paths(
    git_repo: Path, aistack_home: Path
) -> None:
    (git_repo / "private").mkdir()
    (git_repo / "private" / "notes.txt").write_text("TOPSECRET-NOTE\n")
    (aistack_home / "settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Bash(python3:*)"], "deny": ["Read(./private/**)"]}}))
    git_config = (git_repo / ".git" / "config").read_text()
    attack = (
        "python3 -c \"import pathlib as p\n"
        "for f in ['.git/config', '.git/hooks/post-checkout', '.mcp.json']:\n"
        "    try: p.Path(f).open('a').write('x')\n"
        "    except OSError as e: print(f, e.strerror)\n"
        "print(open('private/notes.txt').read() or 'EMPTY')\""
    )
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": attack})]), Turn(text="done")]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "go", *MODEL], cwd=git_repo,
                           env=server.env("anthropic"), timeout=120)
        assert proc.returncode == 0, proc.stderr
        sent = _tool_results(server)
    result = json.loads(proc.stdout)
    assert result["permission_denials"] == []  # the engine allowed it: the rule says so
    assert (git_repo / ".git" / "config").read_text() == git_config
    assert not (git_repo / ".git" / "hooks" / "post-checkout").exists()
    assert not (git_repo / ".mcp.json").exists()
    assert "Read-only file system" in sent
    assert "TOPSECRET-NOTE" not in sent


def test_cd_carries_over_and_the_next_command_is_judged_from_there(
    git_repo: Path, aistack_home: Path
) -> None:
    git_config = (git_repo / ".git" / "config").read_text()
    script = [
        Turn(tool_calls=[ToolCall("Bash", {"command": "cd .git"})]),
        Turn(tool_calls=[ToolCall("Bash", {"command": "echo '[alias] x = !touch P' >> config"})]),
        Turn(text="done"),
    ]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "go", *MODEL, "--permission-mode", "acceptEdits"],
                           cwd=git_repo, env=server.env("anthropic"), timeout=120)
        assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    denied = result["permission_denials"]
    # Judged from the project root, `>> config` would be an edit inside the project, which
    # acceptEdits allows; judged from .git/ it writes .git/config, which always asks (and
    # print mode denies what asks).
    assert [d["tool_input"]["command"] for d in denied] == [
        "echo '[alias] x = !touch P' >> config"
    ]
    assert not (git_repo / "config").exists()
    assert (git_repo / ".git" / "config").read_text() == git_config


@needs_bwrap
@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_in_bypass_mode_nothing_left_behind_runs_at_the_users_next_git_status(
    sandbox: str, git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    """The model's commands, allowed by bypassPermissions, leave git settings that the
    user's next `git status` runs: without the sandbox (the proof that they are real) the
    marker appears; with it none of them lands, and a repository it creates is moved
    aside."""
    (aistack_home / "settings.json").write_text(json.dumps({"sandbox": sandbox}))
    marker = tmp_path / "PWNED"
    fsmon = f"[core]\\n\\tfsmonitor = \\\"touch {marker} #\\\"\\n"
    attacks = [
        "python3 -c \"import os; os.rename('.git', 'g'); "
        f"open('g/config', 'a').write('{fsmon}'); os.rename('g', '.git')\"",
        "cp -r .git .gc && python3 -c \"import os; "
        f"open('.gc/config', 'a').write('{fsmon}'); "
        "open('.git/commondir', 'w').write(os.getcwd() + '/.gc')\"",
        f"git init -q sub && python3 -c \"open('sub/.git/config', 'a').write('{fsmon}')\"",
    ]
    script = [Turn(tool_calls=[ToolCall("Bash", {"command": a})]) for a in attacks]
    script.append(Turn(text="done"))
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "go", *MODEL, "--permission-mode", "bypassPermissions"],
                           cwd=git_repo, env=server.env("anthropic"), timeout=120)
        assert proc.returncode == 0, proc.stderr
        sent = _tool_results(server)
    assert json.loads(proc.stdout)["permission_denials"] == []  # the mode allowed them all
    for where in (git_repo, git_repo / "sub"):
        subprocess.run(["git", "status"], cwd=where, capture_output=True, check=False)
    if sandbox == "off":
        assert marker.exists()
        return
    assert not marker.exists()
    assert "Read-only file system" in sent or "Device or resource busy" in sent
    assert not (git_repo / "sub" / ".git").exists()
    assert list((git_repo / "sub").glob(".git.quarantined-by-aistack-*"))
