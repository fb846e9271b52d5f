"""A project configured only for Claude Code behaves as Claude Code documents, in print mode:
`.claude/settings.json` allow and deny rules (with Claude Code's path anchors) and a
PreToolUse hook in Claude Code's shape; nothing that grants or runs before trust; `aistack
doctor` names what it read and what it left out; skill bodies stay out of the first request
with the code index on."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import run_aistack

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"

GUARD = """#!{python}
import json, os, sys
event = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-events.jsonl"), "a") as log:
    log.write(json.dumps({{**event, "team_marker": os.environ.get("TEAM_MARKER")}}) + "\\n")
path = event["tool_input"].get("file_path", "")
if path.endswith("protected.txt"):
    print(json.dumps({{"hookSpecificOutput": {{
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "protected.txt is read-only by team policy"}}}}))
elif path.endswith("blocked.txt"):
    print("blocked.txt may not be written (exit 2)", file=sys.stderr)
    sys.exit(2)
"""


def claude_code_project(repo: Path) -> None:
    """The settings of Claude Code's documentation, and nothing for aistack."""
    hooks_dir = repo / ".claude" / "hooks"
    hooks_dir.mkdir(parents=True)
    guard = hooks_dir / "guard.py"
    guard.write_text(GUARD.format(python=sys.executable))
    guard.chmod(guard.stat().st_mode | stat.S_IXUSR)
    (repo / ".claude" / "settings.json").write_text(json.dumps({
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "permissions": {
            "allow": ["Bash(touch made-by-rule.txt)", "Bash(printenv TEAM_MARKER)",
                      "Edit(/docs/**)"],
            "deny": ["Read(./.env)", "Read(./private/**)"],
        },
        "hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.py'}]}]},
        "env": {"TEAM_MARKER": "from-claude-settings"},
        "model": "claude-opus-4-1",
    }))
    (repo / "docs").mkdir()
    (repo / "private").mkdir()
    (repo / "private" / "notes.txt").write_text("PRIVATE-NOTES-7788\n")
    (repo / ".env").write_text("API_TOKEN=ENV-SECRET-5566\n")


CALLS = [
    ToolCall("Bash", {"command": "touch made-by-rule.txt"}),
    ToolCall("Write", {"file_path": "docs/ok.md", "content": "fine\n"}),
    ToolCall("Write", {"file_path": "docs/protected.txt", "content": "no\n"}),
    ToolCall("Write", {"file_path": "docs/blocked.txt", "content": "no\n"}),
    ToolCall("Read", {"file_path": "private/notes.txt"}),
    ToolCall("Read", {"file_path": ".env"}),
    ToolCall("Bash", {"command": "printenv TEAM_MARKER"}),
]


def run_print(repo: Path, *extra: str) -> tuple[dict[str, Any], str, str]:
    """(result object, the request that carried the tool results, stderr)."""
    script = [Turn(tool_calls=list(CALLS)), Turn(text="Done.")]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "set things up", "--model", MODEL, "--output-format", "json",
                            *extra], cwd=repo, env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        told = json.dumps(server.model_requests[-1].body)
    return json.loads(proc.stdout), told, proc.stderr


def denied_inputs(result: dict[str, Any]) -> list[str]:
    return sorted(d["tool_input"].get("file_path") or d["tool_input"].get("command", "")
                  for d in result["permission_denials"])


def test_claude_code_settings_apply_as_documented_once_trusted(git_repo: Path) -> None:
    claude_code_project(git_repo)
    result, told, _ = run_print(git_repo, "--trust-project")
    # allow: the exact Bash command, and Edit(/docs/**) anchored at the project
    assert (git_repo / "made-by-rule.txt").exists()
    assert (git_repo / "docs" / "ok.md").read_text() == "fine\n"
    # the hook: permissionDecision deny and exit code 2, both told to the model
    assert not (git_repo / "docs" / "protected.txt").exists()
    assert not (git_repo / "docs" / "blocked.txt").exists()
    assert "protected.txt is read-only by team policy" in told
    assert "blocked.txt may not be written (exit 2)" in told
    # deny: Read(./private/**) and Read(./.env)
    assert "PRIVATE-NOTES-7788" not in told and "ENV-SECRET-5566" not in told
    assert {".env", "private/notes.txt"} <= set(denied_inputs(result))
    # the hook got Claude Code's event on stdin, for the Write calls only (Edit|Write)
    events = [json.loads(line) for line in
              (git_repo / "hook-events.jsonl").read_text().splitlines()]
    assert sorted(e["tool_input"]["file_path"] for e in events) == [
        "docs/blocked.txt", "docs/ok.md", "docs/protected.txt"]
    # env: the variables reach Bash commands and hooks
    assert "from-claude-settings" in told
    for event in events:
        assert event["team_marker"] == "from-claude-settings"
        assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "Write"
        assert event["session_id"] == result["session_id"]
        assert Path(event["cwd"]).resolve() == git_repo.resolve()


def test_untrusted_claude_code_settings_grant_and_run_nothing(git_repo: Path) -> None:
    claude_code_project(git_repo)
    result, told, stderr = run_print(git_repo)
    assert not (git_repo / "made-by-rule.txt").exists()  # the allow rules wait for trust
    assert not (git_repo / "docs" / "ok.md").exists()
    assert not (git_repo / "hook-events.jsonl").exists()  # and so does the hook
    assert "PRIVATE-NOTES-7788" not in told  # deny rules apply without trust
    assert "from-claude-settings" not in told  # env waits for trust too
    assert "touch made-by-rule.txt" in denied_inputs(result)
    notice = next(line for line in stderr.splitlines() if "not trusted" in line)
    assert "allow rule Edit(./docs/**)" in notice
    assert "hooks in .claude/settings.json" in notice


def test_the_users_claude_env_points_the_provider(git_repo: Path, tmp_path: Path) -> None:
    """`env` in ~/.claude/settings.json sets the provider's base URL and key, as it does for
    Claude Code: the run reaches the server only through it."""
    with FakeLLMServer([Turn(text="reached through env")]) as server:
        user_claude = tmp_path / "user-home" / ".claude"  # HOME of every test (conftest)
        user_claude.mkdir()
        (user_claude / "settings.json").write_text(json.dumps({"env": server.env("anthropic")}))
        proc = run_aistack(["-p", "hi", "--model", MODEL], cwd=git_repo)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "reached through env"
        assert len(server.model_requests) == 1


def test_doctor_names_claude_files_ignored_keys_and_what_waits_for_trust(
    git_repo: Path, tmp_path: Path
) -> None:
    claude_code_project(git_repo)
    user_claude = tmp_path / "user-home" / ".claude"  # HOME of every test (conftest)
    user_claude.mkdir()
    (user_claude / "settings.json").write_text(json.dumps(
        {"permissions": {"deny": ["KillShell"]}, "statusLine": {"type": "command"}}))
    commands = git_repo / ".claude" / "commands"
    commands.mkdir()
    (commands / "review.md").write_text("---\ndescription: Review\n---\nReview $ARGUMENTS\n")
    (commands / "bad name.md").write_text("x\n")
    proc = run_aistack(["doctor"], cwd=git_repo)
    out = proc.stdout
    assert f"settings: {user_claude / 'settings.json'} (Claude Code)" in out
    assert f"settings: {git_repo / '.claude' / 'settings.json'} (Claude Code)" in out
    assert "ignored: model (not an aistack setting)" in out
    assert "ignored: statusLine (not an aistack setting)" in out
    assert "ignored: permissions.deny 'KillShell' (aistack has no KillShell tool)" in out
    assert "not trusted yet: allow rule Bash(touch made-by-rule.txt)" in out
    assert "not trusted yet: hooks in .claude/settings.json" in out
    assert "$schema" not in out
    assert "slash commands: /review" in out
    assert "'bad name' is not a command name" in out


def test_skill_body_stays_out_of_the_first_request_with_the_code_index_on(
    git_repo: Path
) -> None:
    skill = git_repo / ".claude" / "skills" / "deploy-checklist"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy-checklist\ndescription: Steps to follow before deploying.\n---\n"
        "# Deploy checklist\n\nSKILL-BODY-MARKER: run the deploy smoke tests first.\n")
    (git_repo / "deploy.py").write_text(
        'def run_deploy_smoke_tests():\n    """CODE-MARKER-4242: deploy smoke tests."""\n'
        "    return 0\n")
    index = run_aistack(["index"], cwd=git_repo, timeout=120)
    assert index.returncode == 0, index.stderr
    with FakeLLMServer([Turn(text="ok")]) as server:
        proc = run_aistack(["-p", "run the deploy smoke tests", "--model", MODEL],
                           cwd=git_repo, env=server.env("anthropic"))
        assert proc.returncode == 0, proc.stderr
        first = json.dumps(server.model_requests[0].body)
    assert "CODE-MARKER-4242" in first  # the code index was on and injected
    assert "deploy-checklist" in first and "Steps to follow before deploying." in first
    assert "SKILL-BODY-MARKER" not in first


def test_doctor_lists_subagents_and_their_problems(git_repo: Path, tmp_path: Path) -> None:
    user_agents = tmp_path / "user-home" / ".claude" / "agents"  # HOME of every test
    user_agents.mkdir(parents=True)
    (user_agents / "helper.md").write_text(
        "---\nname: helper\ndescription: Helps.\ntools: Read\n---\nYou help.\n")
    project_agents = git_repo / ".claude" / "agents"
    project_agents.mkdir(parents=True)
    (project_agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews.\nmodel: opus\n---\nYou review.\n")
    (project_agents / "broken.md").write_text("---\nname: broken\n---\nno description\n")
    out = run_aistack(["doctor"], cwd=git_repo).stdout
    assert f"subagent: helper (Read; model inherit) from {user_agents / 'helper.md'}" in out
    assert "not trusted yet: subagent reviewer in" in out
    assert "project subagent 'reviewer' not loaded: the project is not trusted" in out
    assert "`description` is missing" in out


def test_doctor_lists_instruction_and_identity_files_with_sizes(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    (aistack_home / "USER.md").write_text("Prefers British spelling.\n")
    (git_repo / ".aistack").mkdir()
    (git_repo / ".aistack" / "SOUL.md").write_text("Be grumpy.\n")
    (git_repo / "CLAUDE.md").write_text("Read @docs/rules.md first.\n")
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "rules.md").write_text("No globals.\n")
    user_claude = tmp_path / "user-home" / ".claude"  # HOME of every test (conftest)
    user_claude.mkdir(parents=True, exist_ok=True)
    (user_claude / "CLAUDE.md").write_text("I use vim.\n")
    out = run_aistack(["doctor"], cwd=git_repo).stdout
    assert f"identity: {aistack_home / 'USER.md'} (25 bytes)" in out
    assert "not trusted yet: identity file .aistack/SOUL.md" in out
    assert f"instructions: {user_claude / 'CLAUDE.md'} (10 bytes)" in out
    assert f"instructions: {git_repo / 'CLAUDE.md'}" in out
    assert f"import: {git_repo / 'docs' / 'rules.md'} (11 bytes)" in out


def test_doctor_summarises_many_untrusted_rules_of_a_file_and_lists_skills(
    git_repo: Path,
) -> None:
    (git_repo / ".claude").mkdir()
    rules = [f"Bash(tool{i}:*)" for i in range(115)]
    (git_repo / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": rules}}))
    skill = git_repo / ".claude" / "skills" / "long"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: long\ndescription: \"{'word ' * 300}\"\n---\nBody\n")
    out = run_aistack(["doctor"], cwd=git_repo).stdout
    assert out.count("not trusted yet") == 1, out  # one line for the 115 rules
    assert "115 allow rules in" in out and "Bash(tool0:*), Bash(tool1:*), Bash(tool2:*), …" in out
    assert "skills: " in out and "long" in out
    assert "skill problem:" in out and "'description' is 1499 characters" in out
