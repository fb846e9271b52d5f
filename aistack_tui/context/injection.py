"""Per-turn context: memory and code knowledge under one shared token budget.

The budget (default 15% of the model's context window) is split so memory, which is
small and high-value (pinned facts, the current task), is filled first and code
knowledge gets the rest. What was injected last is kept for `/context` to show.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from aistack_tui.llm.types import Message, TextBlock

log = logging.getLogger(__name__)
MEMORY_SHARE = 0.4
_MENTION = re.compile(r"(?:^|\s)@([\w./-]+)")
_PATHLIKE = re.compile(r"\b[\w-]+(?:/[\w.-]+)*\.[A-Za-z]{1,5}\b")


class MemorySource(Protocol):
    async def context_block(self, messages: list[Message], token_budget: int) -> str: ...


class KnowledgeSource(Protocol):
    async def context_block(
        self, message: str, mentioned_files: list[str], token_budget: int
    ) -> str: ...


@dataclass
class InjectedContext:
    memory: str = ""
    knowledge: str = ""
    budget: int = 0

    def text(self) -> str:
        parts = []
        if self.memory:
            parts.append(f"<memory>\n{self.memory}\n</memory>")
        if self.knowledge:
            parts.append(f"<code_knowledge>\n{self.knowledge}\n</code_knowledge>")
        return "\n\n".join(parts)


@dataclass
class ContextInjector:
    """Callable the agent awaits before each model request."""

    budget_tokens: int
    project_root: Path
    memory: MemorySource | None = None
    knowledge: KnowledgeSource | None = None
    last: InjectedContext = field(default_factory=InjectedContext)

    async def __call__(self, messages: list[Message]) -> str:
        injected = InjectedContext(budget=self.budget_tokens)
        memory_budget = int(self.budget_tokens * MEMORY_SHARE)
        if self.memory is not None:
            try:
                injected.memory = await self.memory.context_block(messages, memory_budget)
            except Exception as e:  # context is a help, never a reason to fail a turn
                log.warning("memory injection failed: %s", e)
        if self.knowledge is not None:
            from aistack_tui.llm.tokens import estimate_tokens

            remaining = self.budget_tokens - estimate_tokens(injected.memory)
            query = latest_user_text(messages)
            try:
                injected.knowledge = await self.knowledge.context_block(
                    query, mentioned_files(query), max(0, remaining)
                )
            except Exception as e:
                log.warning("code knowledge injection failed: %s", e)
        self.last = injected
        return injected.text()


def latest_user_text(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            if text.strip():
                return text
    return ""


def mentioned_files(text: str) -> list[str]:
    """`@path` mentions and path-like words, for personalising the repo map."""
    found = [m.group(1) for m in _MENTION.finditer(text)]
    found += [m.group(0) for m in _PATHLIKE.finditer(text)]
    return list(dict.fromkeys(found))
