"""Memory and skills as a front end may see and change them: views and commands.

Front ends get these instead of the `MemoryManager` and `SkillRegistry` themselves, so
what they can do is what `/memory` and `/skills` offer (list, remember, forget, pin,
search; list skills and their problems), and a memory the user adds is written as the
user's, to the current session, by one rule here rather than in each front end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aistack_tui.memory.manager import MemoryManager, parse_memory_id
from aistack_tui.memory.models import MemoryHit, MemoryRecord
from aistack_tui.skills.registry import SkillRegistry


class MemoryView:
    """Long-term memory of the session's project and user."""

    def __init__(self, manager: MemoryManager, session_id: Callable[[], str]) -> None:
        self._manager = manager
        self._session_id = session_id

    async def list(self, limit: int = 100) -> Sequence[MemoryRecord]:
        """The memories in force, pinned and most important first."""
        return await self._manager.list(limit=limit)

    async def remember(self, text: str) -> MemoryRecord:
        """Store `text` as the user's own memory (merged with one it repeats)."""
        return await self._manager.write(text, source="user", session_id=self._session_id())

    async def forget(self, memory_id: str) -> int:
        """Delete the memory `m12` (or `12`); returns its number. MemoryOperationError
        for an id that is not one."""
        number = parse_memory_id(memory_id)
        await self._manager.forget(number)
        return number

    async def pin(self, memory_id: str, pinned: bool = True) -> int:
        """Pin (or unpin) the memory `m12`, so it is always injected; returns its number."""
        number = parse_memory_id(memory_id)
        await self._manager.pin(number, pinned)
        return number

    async def search(self, query: str) -> Sequence[MemoryHit]:
        """Memories and past sessions' messages matching `query`, best first."""
        return await self._manager.search(query)


@dataclass(frozen=True, slots=True)
class SkillSummary:
    """One skill as `/skills` lists it."""

    name: str
    description: str
    source: str
    active: bool


class SkillsView:
    """The skills the model can load this session."""

    def __init__(self, registry: SkillRegistry) -> None:
        self._registry = registry

    def list(self) -> list[SkillSummary]:
        """Every skill by name, saying which are active now."""
        active = set(self._registry.active)
        return [
            SkillSummary(s.name, s.description, s.source, s.name in active)
            for s in sorted(self._registry.skills.values(), key=lambda s: s.name)
        ]

    @property
    def problems(self) -> list[str]:
        """Skill files that could not be read, and why."""
        return list(self._registry.problems)
