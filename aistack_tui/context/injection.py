"""Per-turn context: memory and code knowledge under one shared token budget.

The budget (default 15% of the model's context window) is split so memory, which is
small and high-value (pinned facts, the current task), is filled first and code
knowledge gets the rest. What was injected last is kept for `/context` to show.

Code knowledge is sent only when it carries something the message names: a file the
message mentions, or one of its search words found in the block's code or map. The
index always answers something (the nearest vectors exist for any text), so without this
"hi" in a one-file repository got that file quoted in every request, before the model
asked for it: tokens paid on every turn for nothing the model needs.
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
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


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
            mentioned = mentioned_files(query)
            try:
                block = await self.knowledge.context_block(query, mentioned, max(0, remaining))
                injected.knowledge = block if names_anything(block, query, mentioned) else ""
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


def names_anything(block: str, query: str, mentioned: list[str]) -> bool:
    """True when the knowledge block holds something the message names: a mentioned
    file, or a search word of the message among the words of its code and map (headings
    left out: they are the block's own words, "code", "files", "relevant")."""
    if not block:
        return False
    from aistack_tui.knowledge.chunks import split_identifier
    from aistack_tui.knowledge.search import query_terms

    body = "\n".join(line for line in block.splitlines() if not line.startswith("#"))
    if any(path and path in body for path in mentioned):
        return True
    terms = query_terms(query)
    if not terms:
        return False
    words: set[str] = set()
    for match in _WORD.finditer(body):
        token = match.group(0)
        words.add(token.lower())
        words.update(split_identifier(token))
    if any(term in words for term in terms):
        return True
    # The search behind the block stems words ("requests" finds `handle_request`): so
    # does this check, or a question asked in the plural would get no code at all.
    stems = {_stem(word) for word in words}
    return any(_stem(term) in stems for term in terms)


_SUFFIXES = ("ing", "ers", "er", "ed", "es", "s")


def _stem(word: str) -> str:
    """`word` without one common English ending and a final `e` (`handle`, `handled`,
    `handler` and `handling` all give `handl`); kept whole when too short for one, or
    when it ends in `ss` (`class`, `process`)."""
    if word.endswith("ss"):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word
