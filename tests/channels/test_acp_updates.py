"""Agent events as the updates an editor shows: kinds, diffs, plans, statuses, replay."""

from __future__ import annotations

from pathlib import Path

from acp.schema import (
    AcpMcpServer,
    AgentMessageChunk,
    AgentPlanUpdate,
    EnvVariable,
    FileEditToolCallContent,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from aistack_tui.agent import events as ev
from aistack_tui.channels.acp_editor import mcp_entries
from aistack_tui.channels.acp_updates import UpdateMapper, replay, stop_reason
from aistack_tui.llm.types import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from aistack_tui.tools.base import ToolCallDisplay

TODOS = {"todos": [
    {"content": "read the code", "status": "completed", "activeForm": "reading"},
    {"content": "fix the bug", "status": "in_progress", "activeForm": "fixing"},
    {"content": "run tests", "status": "pending", "activeForm": "testing"},
]}


def _requested(tool_id: str, name: str, tool_input: dict) -> ev.ToolCallRequested:
    return ev.ToolCallRequested(tool_id, name, tool_input, ToolCallDisplay(f"{name} …"))


def _finished(tool_id: str, name: str, text: str, is_error: bool = False) -> ev.ToolFinished:
    return ev.ToolFinished(tool_id, name, ToolResultBlock(tool_use_id=tool_id, content=text,
                                                          is_error=is_error), 0.01)


def test_write_shows_the_file_it_replaces_and_completes(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("old = 1\n")
    mapper = UpdateMapper(tmp_path)
    [start] = mapper.updates(_requested("t1", "Write", {"file_path": "app.py",
                                                        "content": "new = 2\n"}))
    assert isinstance(start, ToolCallStart)
    assert (start.kind, start.status) == ("edit", "pending")
    [diff] = start.content or []
    assert isinstance(diff, FileEditToolCallContent)
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(tmp_path / "app.py"), "old = 1\n", "new = 2\n")
    assert start.locations is not None and start.locations[0].path == str(tmp_path / "app.py")
    [running] = mapper.updates(ev.ToolStarted("t1", "Write"))
    [done] = mapper.updates(_finished("t1", "Write", "wrote app.py"))
    assert isinstance(running, ToolCallProgress) and running.status == "in_progress"
    assert isinstance(done, ToolCallProgress) and done.status == "completed"
    assert done.content is None  # the diff shown at the start stays


def test_todowrite_becomes_the_plan_and_a_denial_fails_the_call(tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path)
    mapper.updates(_requested("t2", "TodoWrite", TODOS))
    plan, _done = mapper.updates(_finished("t2", "TodoWrite", "ok"))
    assert isinstance(plan, AgentPlanUpdate)
    assert [(e.content, e.status) for e in plan.entries] == [
        ("read the code", "completed"), ("fix the bug", "in_progress"), ("run tests", "pending")]
    mapper.updates(_requested("t3", "Bash", {"command": "rm -rf build"}))
    [denied] = mapper.updates(ev.PermissionDecided("t3", "Bash", "deny", "the user said no"))
    assert isinstance(denied, ToolCallProgress) and denied.status == "failed"
    assert mapper.updates(ev.PermissionDecided("t4", "Read", "allow", "read-only")) == []


def test_turn_end_reasons_map_to_acp_stop_reasons() -> None:
    def ended(reason: str) -> ev.TurnEnded:
        return ev.TurnEnded(reason, 1, "", Usage(), None, 0, 0)  # type: ignore[arg-type]

    assert stop_reason(ended("completed")) == "end_turn"
    assert stop_reason(ended("interrupted")) == "cancelled"
    assert stop_reason(ended("max_turns")) == "max_turn_requests"
    assert stop_reason(ended("error")) == "end_turn"


def test_replay_shows_the_stored_conversation_without_model_notes(tmp_path: Path) -> None:
    messages = [
        Message(role="user", content=[TextBlock(text="fix it"),
                                      TextBlock(text="<user-undo>for the model</user-undo>")]),
        Message(role="assistant", content=[
            TextBlock(text="Looking."),
            ToolUseBlock(id="u1", name="Edit", input={"file_path": "a.py", "old_string": "a",
                                                      "new_string": "b"})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="u1", content="edited")]),
    ]
    updates = replay(messages, tmp_path)
    assert [type(u) for u in updates] == [UserMessageChunk, AgentMessageChunk, ToolCallStart,
                                          ToolCallProgress]
    assert updates[0].content.text == "fix it"  # type: ignore[union-attr]
    assert updates[3].status == "completed"  # type: ignore[union-attr]


def test_a_command_run_in_the_editor_terminal_keeps_its_terminal_in_the_card(
        tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path)
    mapper.updates(_requested("t1", "Bash", {"command": "make"}))
    mapper.terminals["t1"] = "term-7"
    [done] = mapper.updates(_finished("t1", "Bash", "built"))
    assert isinstance(done, ToolCallProgress) and done.status == "completed"
    assert [(c.type, getattr(c, "terminal_id", None)) for c in done.content or []] == [
        ("terminal", "term-7")]
    # A failure also says why in words, under the terminal.
    mapper.updates(_requested("t2", "Bash", {"command": "make"}))
    mapper.terminals["t2"] = "term-8"
    [failed] = mapper.updates(_finished("t2", "Bash", "timed out", is_error=True))
    assert [c.type for c in failed.content or []] == ["terminal", "content"]
    assert mapper.terminals == {}


def test_editor_mcp_servers_become_mcp_json_entries() -> None:
    entries, skipped = mcp_entries([
        McpServerStdio(name="files", command="npx", args=["-y", "srv"],
                       env=[EnvVariable(name="A", value="1")]),
        HttpMcpServer(type="http", name="web", url="https://x/mcp",
                      headers=[HttpHeader(name="Authorization", value="Bearer t")]),
        SseMcpServer(type="sse", name="old", url="https://x/sse", headers=[]),
        AcpMcpServer(type="acp", name="inproc", server_id="s1"),
    ])
    assert entries == {
        "files": {"command": "npx", "args": ["-y", "srv"], "env": {"A": "1"}},
        "web": {"type": "http", "url": "https://x/mcp",
                "headers": {"Authorization": "Bearer t"}},
        "old": {"type": "sse", "url": "https://x/sse", "headers": {}},
    }
    assert len(skipped) == 1 and "inproc" in skipped[0]
