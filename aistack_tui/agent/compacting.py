"""When and how the agent compacts its history, as the loop and `/compact` ask for it.

`agent/compaction.py` holds the compaction itself (a summary, or trimming old tool
results); this module is the agent's side of it: warning past the soft threshold,
compacting past the hard one, running PreCompact and SessionStart hooks around it,
counting the summariser's usage, and storing the compacted history for resumes through
the agent's listeners. It reads and changes the agent only through `CompactionHost`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from aistack_tui.agent import events as ev
from aistack_tui.agent.compaction import (
    CompactionResult,
    CompactionSettings,
    compact,
    usage_ratio,
)
from aistack_tui.agent.history import repair_history
from aistack_tui.agent.usage import UsageTotals
from aistack_tui.llm import types as lt
from aistack_tui.llm.model_info import ModelInfo, cost_usd
from aistack_tui.llm.provider import Provider

if TYPE_CHECKING:
    from aistack_tui.agent.hooks import HookRunner
    from aistack_tui.agent.tool_runner import ToolRunner


class CompactionHost(Protocol):
    """What compaction reads and changes of the agent (`agent.runtime.Agent`)."""

    system_prompt: str
    messages: list[lt.Message]
    max_output_tokens: int | None
    model_info: ModelInfo
    provider: Provider
    compaction: CompactionSettings
    totals: UsageTotals
    runner: ToolRunner
    hook_runner: HookRunner | None
    on_compacted: Callable[[str], Awaitable[None]] | None
    route_for: Callable[[str], tuple[Provider, ModelInfo] | None]
    warned_context: bool
    """The soft threshold's warning was shown (once per compaction)."""

    def add_model_note(self, text: str) -> None: ...

    async def tell_message(self, message: lt.Message) -> None: ...


def available_tokens(host: CompactionHost) -> int:
    """The context window less the room kept for the answer."""
    max_out = host.max_output_tokens or host.model_info.max_output_tokens
    return max(1, host.model_info.context_window - max_out)


async def compaction_notices(
    host: CompactionHost, request: lt.LLMRequest
) -> AsyncIterator[ev.Notice]:
    """Warn past the soft threshold; compact past the hard one (yields one notice)."""
    max_out = host.max_output_tokens or host.model_info.max_output_tokens
    ratio = usage_ratio(request, host.model_info.context_window, max_out)
    if ratio >= host.compaction.auto_ratio:
        result = await compact_history(host, trigger="auto")
        if result is not None:
            yield ev.Notice(
                f"Context compacted (phase {result.phase}): "
                f"{result.before_tokens:,} → {result.after_tokens:,} tokens",
                "info",
            )
    elif ratio >= host.compaction.warn_ratio and not host.warned_context:
        host.warned_context = True
        yield ev.Notice(
            f"Context is {ratio:.0%} full; it will be compacted automatically at "
            f"{host.compaction.auto_ratio:.0%} (or use /compact).",
            "warning",
        )


async def compact_history(
    host: CompactionHost,
    instructions: str = "",
    *,
    force_summary: bool = False,
    trigger: str = "manual",
) -> CompactionResult | None:
    """Compact the history now (`/compact`: `trigger` manual; the threshold: auto);
    persists the result for resumes. PreCompact hooks run first, SessionStart hooks
    for `compact` after, their text a note for the model's next message."""
    if host.hook_runner is not None:
        await host.hook_runner.pre_compact(trigger, instructions)
    request = lt.LLMRequest(
        system=host.system_prompt,
        messages=repair_history(host.messages),
        tools=host.runner.tools.specs(),
        max_tokens=host.max_output_tokens or host.model_info.max_output_tokens,
    )
    target = int(available_tokens(host) * host.compaction.warn_ratio)
    summariser, summariser_info = host.route_for("compaction") or (
        host.provider,
        host.model_info,
    )
    result = await compact(
        summariser,
        request,
        target_tokens=target,
        instructions=instructions,
        force_summary=force_summary or bool(instructions),
    )
    if result is None:
        return None
    if result.usage is not None:
        host.totals.add(result.model, result.usage, cost_usd(summariser_info, result.usage))
    host.warned_context = False
    if result.phase == 2:
        # Stored history gets the summary and fresh copies of the kept tail after it,
        # so a resumed session starts from the summary with nothing lost or doubled.
        fresh = [result.messages[0]] + [
            m.model_copy(update={"id": lt.new_message_id()}) for m in result.messages[1:]
        ]
        for message in fresh:
            await host.tell_message(message)
        host.messages = fresh
        if host.on_compacted is not None:
            await host.on_compacted(result.summary)
    else:
        host.messages = result.messages
    if host.hook_runner is not None:
        started = await host.hook_runner.session_start("compact")
        if started:
            host.add_model_note(
                f"<user-session-start-hook>\n{started}\n</user-session-start-hook>"
            )
    return result
