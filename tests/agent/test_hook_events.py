"""Hooks as Claude Code defines them: which groups a matcher selects, every event with
its input fields, and SessionStart chosen by its source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.agent.hooks import matcher_matches
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.agent.test_runtime import collect, start


@pytest.mark.parametrize(("matcher", "value", "expected"), [
    ("", "Bash", True),
    ("*", "mcp__github__create_issue", True),
    ("Write", "Write", True),
    ("Write", "MultiWrite", False),  # a plain name is exact, not a search
    ("Edit|Write", "Write", True),
    ("Edit | Write", "Edit", True),
    ("Edit|Write", "MultiEdit", False),
    ("Notebook.*", "NotebookEdit", True),
    ("mcp__memory__.*", "mcp__memory__create_entities", True),
    ("mcp__.*__write.*", "mcp__fs__write_file", True),
    ("mcp__.*__write.*", "mcp__fs__read_file", False),
    ("Edit$", "MultiEdit", True),  # a regular expression is searched, as Claude Code does
    ("^Bash$", "Bash", True),
    ("[unclosed", "Bash", False),  # an invalid expression matches nothing
    ("startup", "startup", True),
    ("compact", "startup", False),
    ("resume|clear", "clear", True),
    ("auto", "manual", False),
])
def test_matchers_match_as_claude_code_matches(matcher: str, value: str, expected: bool) -> None:
    assert matcher_matches(matcher, value) is expected


def _hooks(log: Path, events: dict[str, list[str]]) -> dict[str, Any]:
    """Hook settings: each event's groups (by matcher) append their input to `log`."""
    record = (f"python3 -c \"import json,os,sys; d=json.load(sys.stdin); "
              f"d['env_project']=os.environ.get('CLAUDE_PROJECT_DIR'); "
              f"open('{log}','a').write(json.dumps(d)+chr(10))\"")
    return {event: [{"matcher": m, "hooks": [{"type": "command", "command": record}]}
                    for m in matchers] for event, matchers in events.items()}


def _seen(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def _settings(home: Path, hooks: dict[str, Any]) -> None:
    path = home / "settings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data["hooks"] = hooks
    path.write_text(json.dumps(data))


async def test_session_start_runs_only_the_groups_for_its_source(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.jsonl"
    _settings(aistack_home, _hooks(log, {"SessionStart": ["startup", "compact", "resume|clear"]}))
    with FakeLLMServer([Turn(text="hi")]) as server:
        session = await start(server, "anthropic")
        assert [e["source"] for e in _seen(log)] == ["startup"]  # not compact, not resume
        await session.new_conversation()  # /clear
        await session.close()
    assert [e["source"] for e in _seen(log)] == ["startup", "clear"]


async def test_every_event_fires_with_claude_codes_fields(
    git_repo: Path, aistack_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.jsonl"
    _settings(aistack_home, _hooks(log, {
        "UserPromptSubmit": [""], "PreToolUse": ["Bash"], "PostToolUse": ["Bash"],
        "Notification": ["permission_prompt"], "SubagentStop": [""], "Stop": [""],
        "PreCompact": ["manual"], "SessionEnd": [""],
    }))
    script = [
        Turn(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]),  # asks
        Turn(tool_calls=[ToolCall("Task", {"description": "look", "prompt": "look"})]),
        Turn(text="looked"),  # the subagent
        Turn(text="done"),
        Turn(text="SUMMARY"),  # /compact's summary
    ]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic")
        await collect(session.agent.run("go"))
        await session.compact("keep the tests")
        await session.close("prompt_input_exit")
    seen = _seen(log)
    events = [e["hook_event_name"] for e in seen]
    assert events == ["UserPromptSubmit", "PreToolUse", "Notification", "SubagentStop",
                      "Stop", "PreCompact", "SessionEnd"], events
    for e in seen:
        assert e["session_id"] == session.session_id
        assert e["permission_mode"] == "default" and e["cwd"] == str(git_repo)
        assert e["env_project"] == str(git_repo)
    by = {e["hook_event_name"]: e for e in seen}
    assert by["Notification"]["notification_type"] == "permission_prompt"
    assert "permission to use Bash" in by["Notification"]["message"]
    assert by["PreCompact"]["trigger"] == "manual"
    assert by["PreCompact"]["custom_instructions"] == "keep the tests"
    assert by["SessionEnd"]["reason"] == "prompt_input_exit"
    assert by["Stop"]["stop_hook_active"] is False
    # The transcript is written afresh for every hook: at SessionEnd it is the compacted
    # conversation (the summary, then what was kept).
    transcript = Path(by["SessionEnd"]["transcript_path"])
    assert transcript == Path(by["Stop"]["transcript_path"])
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert lines[0]["type"] == "user" and "SUMMARY" in json.dumps(lines[0]["message"])
    assert all(line["session_id"] == session.session_id for line in lines)


async def test_session_start_text_reaches_the_model_as_hidden_context(
    git_repo: Path, aistack_home: Path
) -> None:
    _settings(aistack_home, {"SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "echo BRANCH-IS-MAIN"}]},
        {"matcher": "compact", "hooks": [{"type": "command", "command": "echo AFTER-COMPACT"}]},
    ]})
    with FakeLLMServer([Turn(text="hi"), Turn(text="SUMMARY"), Turn(text="ok")]) as server:
        session = await start(server, "anthropic")
        await collect(session.agent.run("first"))
        await session.compact()
        await collect(session.agent.run("second"))
        await session.close()
        first, _summary, last = server.model_requests
    assert "BRANCH-IS-MAIN" in json.dumps(first.body["system"])
    assert "AFTER-COMPACT" not in json.dumps(first.body)
    assert "AFTER-COMPACT" in json.dumps(last.body["messages"][-1])
