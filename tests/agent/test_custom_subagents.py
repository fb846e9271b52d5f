"""Custom subagents (`.claude/agents/*.md`): offered by the Task tool with their
descriptions, restricted to their tools, run on their model with their prompt, and the
project's own only once it is trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aistack_tui.llm.models_endpoint import refresh
from aistack_tui.llm.registry import resolve_provider_config
from aistack_tui.skills.agents import AgentSet, agent_locations, alias_model, load_agent
from aistack_tui.subagent_types import known_claude_models
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.agent.test_runtime import collect, start

REVIEWER = """---
name: code-reviewer
description: Reviews code for bugs. Use after every change.
tools: Read, Grep
model: anthropic/claude-haiku-4-5
---
You are REVIEWER-PROMPT, a meticulous code reviewer.
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_a_claude_code_agent_file_loads(tmp_path: Path) -> None:
    path = _write(tmp_path / ".claude" / "agents", "reviewer.md", REVIEWER)
    agent = load_agent(path, "project .claude", tmp_path)
    assert agent.name == "code-reviewer" and agent.tools == ("Read", "Grep")
    assert agent.model == "anthropic/claude-haiku-4-5"
    assert agent.prompt == "You are REVIEWER-PROMPT, a meticulous code reviewer."
    listed = _write(tmp_path / ".claude" / "agents", "b.md",
                    "---\nname: b\ndescription: x\ntools:\n  - Bash\n  - Read\n"
                    "model: inherit\n---\nbody\n")
    b = load_agent(listed, "project .claude", tmp_path)
    assert b.tools == ("Bash", "Read") and b.model is None


@pytest.mark.parametrize(("text", "problem"), [
    ("---\nname: Bad Name\ndescription: x\n---\nbody\n", "lower-case"),
    ("---\nname: ok\n---\nbody\n", "description"),
    ("---\nname: ok\ndescription: x\n---\n\n", "empty"),
    ("---\nname: general-purpose\ndescription: x\n---\nbody\n", "built-in"),
    ("---\nname: [unclosed\n---\nbody\n", "reviewer.md"),
])
def test_bad_agent_files_are_problems_not_crashes(tmp_path: Path, text: str, problem: str) -> None:
    _write(tmp_path / ".claude" / "agents", "reviewer.md", text)
    found = AgentSet.from_locations(agent_locations(tmp_path, tmp_path / "home", tmp_path / "u"))
    assert found.agents == {}
    assert len(found.problems) == 1 and problem in found.problems[0]


def test_a_linked_agent_file_out_of_the_project_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text(REVIEWER)
    folder = tmp_path / "proj" / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").symlink_to(secret)
    found = AgentSet.from_locations(agent_locations(tmp_path / "proj", tmp_path / "h",
                                                    tmp_path / "u"))
    assert found.agents == {} and "not loaded" in found.problems[0]


def test_project_agents_override_user_ones_and_untrusted_ones_fall_back(tmp_path: Path) -> None:
    user = tmp_path / "u"
    _write(user / ".claude" / "agents", "r.md", REVIEWER.replace("REVIEWER", "USER"))
    _write(tmp_path / "p" / ".claude" / "agents", "r.md", REVIEWER)
    found = AgentSet.from_locations(agent_locations(tmp_path / "p", tmp_path / "h", user))
    assert "REVIEWER-PROMPT" in found.agents["code-reviewer"].prompt
    user_only = AgentSet.from_locations(
        [loc for loc in agent_locations(tmp_path / "p", tmp_path / "h", user)
         if not loc[0].startswith("project")])
    kept = found.without_project(None, user_only)
    assert "USER-PROMPT" in kept.agents["code-reviewer"].prompt
    assert "not trusted" in kept.problems[0]


def test_model_aliases_pick_the_newest_of_the_family() -> None:
    known = ["claude-haiku-4-5", "claude-haiku-3-5", "claude-opus-4-1", "claude-opus-4-6"]
    assert alias_model("haiku", known) == "anthropic/claude-haiku-4-5"
    assert alias_model("opus", known) == "anthropic/claude-opus-4-6"
    assert alias_model("sonnet", known) is None


async def test_aliases_choose_among_the_catalogues_claude_models(aistack_home: Path) -> None:
    """Offline the built-in list names the newest of each line; once the models endpoint
    has answered, its list does."""
    assert [alias_model(a, known_claude_models(aistack_home)) for a in ("opus", "haiku")] == [
        "anthropic/claude-opus-5-5", "anthropic/claude-haiku-5-5"]
    with FakeLLMServer(models=["claude-opus-6", "claude-opus-5-5"]) as server:
        config = resolve_provider_config("anthropic", env=server.env("anthropic"))
        assert await refresh([config], aistack_home) == {}
    assert alias_model("opus", known_claude_models(aistack_home)) == "anthropic/claude-opus-6"
    assert alias_model("haiku", known_claude_models(aistack_home)) is None


async def test_task_runs_a_custom_subagent_with_its_tools_model_and_prompt(
    git_repo: Path,
) -> None:
    _write(git_repo / ".claude" / "agents", "reviewer.md", REVIEWER)
    script = [
        Turn(tool_calls=[ToolCall("Task", {"description": "review", "prompt": "review a.py",
                                           "subagent_type": "code-reviewer"})]),
        Turn(text="LGTM"),  # the subagent
        Turn(text="The reviewer says LGTM."),
    ]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic", trust_project=True)
        events = await collect(session.agent.run("review my change"))
        await session.close()
        first, child, last = server.model_requests
    assert events[-1].reason == "completed"
    task_spec = next(t for t in first.body["tools"] if t["name"] == "Task")
    assert "code-reviewer: Reviews code for bugs" in task_spec["description"]
    assert child.body["model"] == "claude-haiku-4-5"
    assert sorted(t["name"] for t in child.body["tools"]) == ["Grep", "Read"]
    assert "REVIEWER-PROMPT" in json.dumps(child.body["system"])
    assert "REVIEWER-PROMPT" not in json.dumps(first.body["system"])
    assert "LGTM" in json.dumps(last.body["messages"][-1])


async def test_an_untrusted_projects_agents_are_not_offered(git_repo: Path) -> None:
    _write(git_repo / ".claude" / "agents", "reviewer.md", REVIEWER)
    script = [
        Turn(tool_calls=[ToolCall("Task", {"description": "review", "prompt": "review",
                                           "subagent_type": "code-reviewer"})]),
        Turn(text="It is not available."),
    ]
    with FakeLLMServer(script) as server:
        session = await start(server, "anthropic")
        await collect(session.agent.run("review my change"))
        found = session.subagents()
        await session.close()
        first, second = server.model_requests
    task_spec = next(t for t in first.body["tools"] if t["name"] == "Task")
    assert "code-reviewer" not in task_spec["description"]
    assert "Unknown subagent_type 'code-reviewer'" in json.dumps(second.body["messages"][-1])
    assert found is not None and "not trusted" in found.problems[0]
