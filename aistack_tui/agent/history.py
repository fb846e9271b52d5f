"""Make a stored history valid to send: every provider rejects some shapes.

A session that crashed or was interrupted can end with an assistant message whose
tool calls were never answered, or hold two user messages in a row (tool results, then
the next prompt after a resume). Rather than changing what was stored, the request copy
is repaired: unanswered calls get an error result and same-role neighbours are merged.
"""

from __future__ import annotations

from aistack_tui.llm.types import ContentBlock, Message, ToolResultBlock, ToolUseBlock

NOT_RUN = "Not run: the session was interrupted before this call finished."


def repair_history(messages: list[Message]) -> list[Message]:
    answered = _answer_calls(list(messages))
    merged: list[Message] = []
    for message in answered:
        if merged and merged[-1].role == message.role:
            merged[-1] = _merge(merged[-1], message)
        else:
            merged.append(message)
    return _fix_order(merged)


def _answer_calls(messages: list[Message]) -> list[Message]:
    """Give every unanswered tool call an error result right after its message."""
    index = 0
    while index < len(messages):
        message = messages[index]
        calls = message.tool_uses() if message.role == "assistant" else []
        following = messages[index + 1] if index + 1 < len(messages) else None
        missing = _unanswered(calls, following if following and following.role == "user" else None)
        if missing:
            results: list[ContentBlock] = [
                ToolResultBlock(tool_use_id=call.id, content=NOT_RUN, is_error=True)
                for call in missing
            ]
            if following is not None and following.role == "user":
                messages[index + 1] = following.model_copy(
                    update={"content": results + list(following.content)}
                )
            else:
                messages.insert(index + 1, Message(role="user", content=results))
        index += 1
    return messages


def _unanswered(calls: list[ToolUseBlock], following: Message | None) -> list[ToolUseBlock]:
    answered = {r.tool_use_id for r in following.tool_results()} if following else set[str]()
    return [c for c in calls if c.id not in answered]


def _merge(first: Message, second: Message) -> Message:
    return first.model_copy(update={"content": [*first.content, *second.content]})


def _fix_order(messages: list[Message]) -> list[Message]:
    """Tool results first within each user message (merging can interleave them)."""
    fixed: list[Message] = []
    for message in messages:
        if message.role == "user" and message.tool_results():
            results = [b for b in message.content if isinstance(b, ToolResultBlock)]
            others = [b for b in message.content if not isinstance(b, ToolResultBlock)]
            message = message.model_copy(update={"content": [*results, *others]})
        fixed.append(message)
    return fixed
