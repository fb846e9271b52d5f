"""Hooks a client program runs (the Agent SDK's callbacks) join the hook runner and are
read like command hooks: matchers, decisions, updatedInput, additional context,
`continue: false`, and failures with and without `on_failure="block"`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.agent.hooks import (
    HookCallback,
    HookConfigError,
    HookGroup,
    HookRunner,
    parse_callback_hooks,
)
from aistack_tui.llm.types import ToolResultBlock


class Client:
    """Answers callbacks from a table of outputs, recording what it was asked."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, dict[str, Any], str | None]] = []

    async def __call__(self, callback_id: str, hook_input: dict[str, Any],
                       tool_use_id: str | None) -> dict[str, Any]:
        self.asked.append((callback_id, hook_input, tool_use_id))
        answer = self.answers[callback_id]
        if isinstance(answer, Exception):
            raise answer
        if answer == "hang":
            await asyncio.Event().wait()
        assert isinstance(answer, dict)
        return answer  # pyright: ignore[reportUnknownVariableType]


def runner(tmp_path: Path, hooks: dict[str, list[HookGroup]], client: Client,
           settings: dict[str, list[HookGroup]] | None = None) -> HookRunner:
    notices: list[str] = []
    run = HookRunner(dict(settings or {}), session_id="s1", cwd=tmp_path,
                     project_root=tmp_path, notify=notices.append)
    run.join(hooks, client)
    return run


def group(matcher: str, *ids: str, timeout: float = 60, block: bool = False) -> HookGroup:
    return HookGroup(matcher, tuple(HookCallback(i, timeout, block) for i in ids))


async def test_pre_tool_use_callback_decides_and_rewrites_the_input(tmp_path: Path) -> None:
    client = Client({
        "deny": {"hookSpecificOutput": {"permissionDecision": "deny",
                                        "permissionDecisionReason": "not today"}},
        "rewrite": {"hookSpecificOutput": {"permissionDecision": "allow",
                                           "updatedInput": {"command": "ls -a"}}},
    })
    run = runner(tmp_path, {"PreToolUse": [group("Edit", "deny"), group("Bash", "rewrite")]},
                 client)
    denied = await run.pre_tool_use("Edit", {"file_path": "a.py"})
    assert denied is not None and (denied.permission, denied.reason) == ("deny", "not today")
    rewritten = await run.pre_tool_use("Bash", {"command": "ls"})
    assert rewritten is not None and rewritten.permission == "allow"
    assert rewritten.updated_input == {"command": "ls -a"}
    assert await run.pre_tool_use("Read", {"file_path": "a.py"}) is None  # no matcher
    assert [(i, d["hook_event_name"], d["tool_name"]) for i, d, _ in client.asked] == [
        ("deny", "PreToolUse", "Edit"), ("rewrite", "PreToolUse", "Bash")]


async def test_callbacks_run_after_the_settings_hooks_of_the_same_event(
    tmp_path: Path,
) -> None:
    client = Client({"ctx": {"hookSpecificOutput": {"additionalContext": "from the SDK"}}})
    settings = {"UserPromptSubmit": [HookGroup("", ())]}
    run = runner(tmp_path, {"UserPromptSubmit": [group("", "ctx")]}, client, settings)
    assert len(run.hooks["UserPromptSubmit"]) == 2
    assert await run.user_prompt_submit("hi") == (None, "from the SDK")


async def test_post_tool_use_context_and_continue_false(tmp_path: Path) -> None:
    client = Client({"after": {"continue": False, "stopReason": "enough",
                               "hookSpecificOutput": {"additionalContext": "looked at it"}}})
    run = runner(tmp_path, {"PostToolUse": [group("Write", "after")]}, client)
    block = ToolResultBlock(tool_use_id="t1", content="written")
    assert await run.post_tool_use("Write", {"file_path": "a"}, block) == "looked at it"
    assert run.halted == "enough"
    # A later PreToolUse in the same run is stopped before the call runs.
    verdict = await run.pre_tool_use("Write", {"file_path": "b"})
    assert verdict is not None and verdict.block_reason and "enough" in verdict.block_reason


async def test_stop_callback_sends_the_model_back_unless_continue_is_false(
    tmp_path: Path,
) -> None:
    client = Client({"again": {"decision": "block", "reason": "run the tests"},
                     "halt": {"continue": False, "decision": "block", "reason": "ignored"}})
    assert await runner(tmp_path, {"Stop": [group("", "again")]}, client).stop(False) == (
        "run the tests")
    assert await runner(tmp_path, {"Stop": [group("", "halt")]}, client).stop(False) is None
    assert client.asked[0][1]["stop_hook_active"] is False


async def test_a_failing_callback_is_no_opinion_unless_it_blocks(tmp_path: Path) -> None:
    client = Client({"boom": RuntimeError("callback raised"), "slow": "hang"})
    lenient = runner(tmp_path, {"PreToolUse": [group("", "boom")]}, client)
    assert await lenient.pre_tool_use("Bash", {"command": "ls"}) is None
    strict = runner(tmp_path, {"PreToolUse": [group("", "boom", block=True)]}, client)
    blocked = await strict.pre_tool_use("Bash", {"command": "ls"})
    assert blocked is not None and "callback raised" in (blocked.block_reason or "")
    timed = runner(tmp_path, {"PreToolUse": [group("", "slow", timeout=0.05, block=True)]},
                   client)
    late = await timed.pre_tool_use("Bash", {"command": "ls"})
    assert late is not None and "timed out" in (late.block_reason or "")


def test_initialize_hooks_parse_into_groups() -> None:
    groups = parse_callback_hooks({
        "PreToolUse": [{"matcher": "Edit|Write", "hookCallbackIds": ["hook_0", "hook_1"],
                        "timeout": 5, "onFailure": "block"}],
        "Stop": [{"matcher": None, "hookCallbackIds": ["hook_2"]}],
    })
    pre = groups["PreToolUse"][0]
    assert pre.matcher == "Edit|Write"
    assert pre.commands == (HookCallback("hook_0", 5.0, True), HookCallback("hook_1", 5.0, True))
    assert groups["Stop"][0] == HookGroup("", (HookCallback("hook_2", 60.0, False),))
    assert parse_callback_hooks(None) == {}


@pytest.mark.parametrize(("raw", "says"), [
    ({"PermissionRequest": [{"hookCallbackIds": ["h"]}]}, "PermissionRequest"),
    ({"PreToolUse": [{"matcher": "Bash"}]}, "hookCallbackIds"),
    ({"PreToolUse": "Bash"}, "must be a list"),
    (["PreToolUse"], "object"),
])
def test_initialize_hooks_that_cannot_run_are_refused(raw: Any, says: str) -> None:
    with pytest.raises(HookConfigError, match=says):
        parse_callback_hooks(raw)
