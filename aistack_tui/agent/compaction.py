"""Keep a long conversation inside the model's context window.

The measure is the estimated tokens of system prompt + tool definitions + messages
against `context_window - max_output_tokens`. Past the soft threshold the user is
warned; past the hard one the history is compacted in two phases: first old tool results
are cut (cheap, usually enough), then, if still too big, the older part is summarised by
the model at a safe split point — never between a tool_use and its tool_result — and
replaced by that summary. The summary message is marked, so a resumed session starts
from it instead of replaying what was compacted away.
"""

from __future__ import annotations

from dataclasses import dataclass

from aistack_tui.llm.provider import Provider
from aistack_tui.llm.tokens import estimate_request_tokens
from aistack_tui.llm.types import (
    ContentBlock,
    LLMRequest,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

SUMMARY_KIND = "compaction_summary"
KEEP_RECENT_MESSAGES = 6
TRUNCATED_RESULT = (
    "[Old tool result removed to save context ({size} characters). "
    "Run the tool again if you need it.]"
)
MIN_RESULT_TO_TRUNCATE = 400

SUMMARY_SYSTEM = (
    "You summarise a coding session so it can continue in a fresh context. Write a dense, "
    "factual summary: the user's goals and constraints, decisions made, files read or "
    "changed (with paths), commands run and their outcomes, errors and how they were "
    "fixed, and what remains to do next. Keep exact names, paths and values. No preamble."
)


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    warn_ratio: float = 0.6
    auto_ratio: float = 0.8


@dataclass(frozen=True, slots=True)
class CompactionResult:
    messages: list[Message]
    before_tokens: int
    after_tokens: int
    phase: int  # 1: tool results truncated; 2: older part summarised
    summary: str = ""
    usage: Usage | None = None
    model: str = ""


def usage_ratio(request: LLMRequest, context_window: int, max_output: int) -> float:
    available = max(1, context_window - max_output)
    return estimate_request_tokens(request) / available


def truncate_old_tool_results(messages: list[Message], keep_recent: int) -> list[Message]:
    """Phase 1: replace big tool results older than the last `keep_recent` messages."""
    cutoff = max(0, len(messages) - keep_recent)
    out: list[Message] = []
    for index, message in enumerate(messages):
        if index >= cutoff or message.role != "user" or not message.tool_results():
            out.append(message)
            continue
        content: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and len(block.text()) > MIN_RESULT_TO_TRUNCATE:
                block = ToolResultBlock(
                    tool_use_id=block.tool_use_id,
                    content=TRUNCATED_RESULT.format(size=len(block.text())),
                    is_error=block.is_error,
                )
            content.append(block)
        out.append(message.model_copy(update={"content": content}))
    return out


def safe_split_index(messages: list[Message], keep_recent: int) -> int:
    """Where the kept tail starts, as late as possible but keeping `keep_recent` messages.

    A safe point is an assistant message (the user message before it, with any tool
    results, stays in the older part together with the calls it answers) or a user
    prompt that carries no tool results. Either way no tool_use is ever separated from
    its tool_result. Returns 0 when there is no such point (nothing to summarise).
    """
    start = min(len(messages) - 1, max(1, len(messages) - keep_recent))
    for index in range(start, 0, -1):
        message = messages[index]
        if message.role == "assistant" or not message.tool_results():
            return index
    return 0


def render_for_summary(messages: list[Message]) -> str:
    """The older part as plain text: summary requests carry no tools."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                lines.append(f"{message.role.upper()}: {block.text}")
            elif isinstance(block, ToolUseBlock):
                lines.append(f"TOOL CALL {block.name}: {block.input}")
            elif isinstance(block, ToolResultBlock):
                text = block.text()
                if len(text) > 2000:
                    text = text[:2000] + f"... [{len(text) - 2000} more characters]"
                lines.append(f"TOOL RESULT{' (error)' if block.is_error else ''}: {text}")
            elif isinstance(block, ThinkingBlock):
                continue
    return "\n\n".join(lines)


def summary_message(summary: str) -> Message:
    return Message(
        role="user",
        content=[TextBlock(text=(
            "This session was compacted. Summary of the earlier conversation:\n\n"
            f"{summary}\n\nContinue from here."
        ))],
        kind=SUMMARY_KIND,
    )


def start_from_last_summary(messages: list[Message]) -> list[Message]:
    """A stored history as the model should see it: from the last compaction on."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].kind == SUMMARY_KIND:
            return messages[index:]
    return messages


async def compact(
    provider: Provider,
    request: LLMRequest,
    *,
    target_tokens: int,
    instructions: str = "",
    force_summary: bool = False,
    keep_recent: int = KEEP_RECENT_MESSAGES,
) -> CompactionResult | None:
    """Compact `request.messages` until the request fits `target_tokens` (or try to).

    Returns None when there was nothing to compact.
    """
    before = estimate_request_tokens(request)
    messages = truncate_old_tool_results(request.messages, keep_recent)
    phase1 = request.model_copy(update={"messages": messages})
    after = estimate_request_tokens(phase1)
    if not force_summary and after <= target_tokens and messages != request.messages:
        return CompactionResult(messages, before, after, phase=1)
    split = safe_split_index(messages, keep_recent)
    if split == 0:
        if messages != request.messages:
            return CompactionResult(messages, before, after, phase=1)
        return None
    older, tail = messages[:split], messages[split:]
    prompt = render_for_summary(older)
    if instructions:
        prompt += f"\n\nWhen summarising, follow these instructions: {instructions}"
    summary_request = LLMRequest(
        system=SUMMARY_SYSTEM,
        messages=[Message.user(prompt)],
        tools=[],
        max_tokens=min(4096, request.max_tokens),
    )
    reply = await provider.complete(summary_request)
    summary = reply.text().strip() or "(the summary was empty)"
    compacted = [summary_message(summary), *tail]
    final = request.model_copy(update={"messages": compacted})
    return CompactionResult(
        compacted,
        before,
        estimate_request_tokens(final),
        2,
        summary,
        usage=reply.usage,
        model=f"{provider.name}/{provider.model}",
    )
