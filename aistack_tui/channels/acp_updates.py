"""Agent events as ACP session updates: what an editor shows of a turn.

Text and thinking stream as message and thought chunks; each tool call becomes an ACP
tool call (kind, title, the files it touches, a diff for edits) whose status moves
pending → in_progress → completed / failed; TodoWrite becomes the editor's plan; usage
becomes a usage update. The mapping is pure (no I/O but reading a file that Write is
about to replace, for its diff), so it is tested without a connection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeAlias, assert_never

from acp.helpers import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ContentToolCallContent,
    Cost,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from aistack_tui.agent import events as ev
from aistack_tui.llm.types import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock

SessionUpdate: TypeAlias = (
    AgentMessageChunk | AgentThoughtChunk | UserMessageChunk | ToolCallStart
    | ToolCallProgress | AgentPlanUpdate | UsageUpdate
)
ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode",
    "other",
]
StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]

TOOL_KINDS: dict[str, ToolKind] = {
    "Read": "read", "Write": "edit", "Edit": "edit", "MultiEdit": "edit",
    "Glob": "search", "Grep": "search", "LS": "search", "CodeSearch": "search",
    "MemorySearch": "search", "Bash": "execute", "WebFetch": "fetch",
    "TodoWrite": "think", "Task": "think", "Skill": "read", "MemoryWrite": "edit",
    "PresentPlan": "switch_mode",
}
RESULT_PREVIEW_CHARS = 4000
"""A tool's output shown in the editor's card is cut here; the model got all of it."""
DIFF_SOURCE_LIMIT = 1_000_000
"""Write shows the file it replaces as the diff's old side only up to this many bytes."""

STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "interrupted": "cancelled",
    "max_turns": "max_turn_requests",
    "budget": "max_tokens",
}


def stop_reason(ended: ev.TurnEnded) -> StopReason:
    """ACP has no "error" stop: a failed turn ends normally after its error was said."""
    return STOP_REASONS.get(ended.reason, "end_turn")


def tool_kind(name: str) -> ToolKind:
    if name.startswith("mcp__"):
        return "other"
    return TOOL_KINDS.get(name, "other")


class UpdateMapper:
    """Turns one session's events into ACP updates; remembers each call's input so the
    result can carry the plan of a TodoWrite and the title of the call."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._inputs: dict[str, tuple[str, dict[str, Any]]] = {}
        self.terminals: dict[str, str] = {}
        """Tool call id -> the editor terminal its command ran in (kept in the card)."""

    def updates(self, event: ev.AgentEvent) -> list[SessionUpdate]:
        match event:
            case ev.TextDelta(text=text):
                return [update_agent_message_text(text)] if text else []
            case ev.ThinkingDelta(text=text):
                return [update_agent_thought_text(text)] if text else []
            case ev.StreamReset(reason=reason):
                return [update_agent_thought_text(
                    f"\n(the answer restarts: {reason})\n")]
            case ev.ToolCallRequested():
                self._inputs[event.tool_use_id] = (event.name, dict(event.input))
                return [self.start(event.tool_use_id, event.name, event.input,
                                   event.display.summary)]
            case ev.PermissionDecided():
                if event.behavior != "deny":
                    return []
                return [update_tool_call(
                    event.tool_use_id, status="failed",
                    content=[tool_content(text_block(f"Denied: {event.reason}"))])]
            case ev.ToolStarted():
                return [update_tool_call(event.tool_use_id, status="in_progress")]
            case ev.ToolFinished():
                return self.finished(event)
            case ev.UsageUpdated():
                cost = (Cost(amount=event.session_cost_usd, currency="USD")
                        if event.session_cost_usd is not None else None)
                return [UsageUpdate(session_update="usage_update", used=event.context_tokens,
                                    size=event.context_window, cost=cost)]
            case ev.Notice(text=text, level=level):
                if level == "info":
                    return [update_agent_thought_text(f"{text}\n")]
                return [update_agent_message_text(f"\n> {level}: {text}\n")]
            case ev.ErrorOccurred(message=message):
                return [update_agent_message_text(f"\n\nError: {message}\n")]
            case ev.SubagentEvent(event=inner):
                if isinstance(inner, ev.ToolCallRequested | ev.ToolStarted | ev.ToolFinished
                              | ev.PermissionDecided):
                    return self.updates(inner)
                return []
            case ev.TurnEnded(reason=reason, detail=detail):
                if reason in ("max_turns", "budget", "tool_failures", "stop_hook") and detail:
                    return [update_agent_message_text(f"\n\n({detail})\n")]
                return []
            case ev.TurnStarted() | ev.MessageAdded() | ev.PermissionAsked():
                return []  # the editor learns of asks from the permission request itself
            case ev.ToolInputDelta():
                return []  # the call is sent whole when the model has finished it
            case _:
                assert_never(event)

    def start(self, tool_use_id: str, name: str, tool_input: dict[str, Any],
              summary: str = "", status: Literal["pending", "completed"] = "pending",
              ) -> ToolCallStart:
        path = self._path(tool_input)
        diffs = self.diffs(name, tool_input)
        return start_tool_call(
            tool_use_id,
            summary or _title(name, tool_input),
            kind=tool_kind(name),
            status=status,
            content=diffs or None,
            locations=[ToolCallLocation(path=str(path))] if path is not None else None,
            raw_input=tool_input,
        )

    def finished(self, event: ev.ToolFinished) -> list[SessionUpdate]:
        name, tool_input = self._inputs.pop(event.tool_use_id, (event.name, {}))
        failed = event.result.is_error
        out: list[SessionUpdate] = []
        if name == "TodoWrite" and not failed:
            out.append(todo_plan(tool_input))
        text = event.result.text()
        content: list[ContentToolCallContent | TerminalToolCallContent] | None = None
        terminal = self.terminals.pop(event.tool_use_id, None)
        if terminal is not None:
            # The editor's terminal shows the output; the text only when it went wrong.
            content = [TerminalToolCallContent(type="terminal", terminal_id=terminal)]
            if failed and text:
                content.append(tool_content(text_block(_preview(text))))
        elif text and (failed or tool_kind(name) not in ("edit",)):
            shown = _preview(text)
            content = [tool_content(text_block(_fenced(shown) if name == "Bash" else shown))]
        title = event.display.summary if event.display is not None else None
        out.append(update_tool_call(
            event.tool_use_id, status="failed" if failed else "completed",
            title=title or None, content=content, raw_output={"content": text,
                                                              "is_error": failed}))
        return out

    def diffs(self, name: str, tool_input: dict[str, Any]) -> list[FileEditToolCallContent]:
        """The change an edit makes, as ACP diffs (the editor renders and reviews them)."""
        path = self._path(tool_input)
        if path is None:
            return []
        if name == "Edit":
            return [tool_diff_content(str(path), str(tool_input.get("new_string", "")),
                                      str(tool_input.get("old_string", "")))]
        if name == "MultiEdit":
            return [tool_diff_content(str(path), str(e.get("new_string", "")),
                                      str(e.get("old_string", "")))
                    for e in tool_input.get("edits", []) if isinstance(e, dict)]
        if name == "Write":
            return [tool_diff_content(str(path), str(tool_input.get("content", "")),
                                      _current_text(path))]
        return []

    def _path(self, tool_input: dict[str, Any]) -> Path | None:
        raw = tool_input.get("file_path") or tool_input.get("path")
        if not isinstance(raw, str) or not raw:
            return None
        path = Path(raw).expanduser()
        return path if path.is_absolute() else self.cwd / path


def todo_plan(tool_input: dict[str, Any]) -> AgentPlanUpdate:
    """TodoWrite's list as the editor's plan (ACP replaces the whole plan each time)."""
    entries = []
    for todo in tool_input.get("todos", []):
        if not isinstance(todo, dict):
            continue
        status = todo.get("status")
        entries.append(plan_entry(
            str(todo.get("content", "")),
            status=status if status in ("pending", "in_progress", "completed") else "pending",
        ))
    return update_plan(entries)


def replay(messages: list[Message] | tuple[Message, ...], cwd: Path) -> list[SessionUpdate]:
    """A stored conversation as the updates that would have shown it (`session/load`)."""
    mapper = UpdateMapper(cwd)
    out: list[SessionUpdate] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text:
                if message.role == "user":
                    if not block.text.startswith("<user-"):  # notes meant for the model
                        out.append(update_user_message_text(block.text))
                else:
                    out.append(update_agent_message_text(block.text))
            elif isinstance(block, ThinkingBlock) and block.thinking:
                out.append(update_agent_thought_text(block.thinking))
            elif isinstance(block, ToolUseBlock):
                mapper._inputs[block.id] = (block.name, dict(block.input))
                out.append(mapper.start(block.id, block.name, block.input))
                if block.name == "TodoWrite":
                    out.append(todo_plan(block.input))
            elif isinstance(block, ToolResultBlock):
                name, _ = mapper._inputs.pop(block.tool_use_id, ("", {}))
                out.append(update_tool_call(
                    block.tool_use_id, status="failed" if block.is_error else "completed",
                    content=None if tool_kind(name) == "edit" and not block.is_error else [
                        tool_content(text_block(block.text()[:RESULT_PREVIEW_CHARS]))]))
    return out


def _title(name: str, tool_input: dict[str, Any]) -> str:
    for key in ("file_path", "path", "command", "pattern", "url", "description", "query"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return f"{name} {value if len(value) <= 80 else value[:79] + '…'}"
    return name


def _preview(text: str) -> str:
    if len(text) <= RESULT_PREVIEW_CHARS:
        return text
    return (text[:RESULT_PREVIEW_CHARS]
            + f"\n… ({len(text) - RESULT_PREVIEW_CHARS} more characters)")


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def _current_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > DIFF_SOURCE_LIMIT:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
