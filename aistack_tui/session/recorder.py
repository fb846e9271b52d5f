"""How a session keeps what happens in it: listeners of the agent.

The agent tells its listeners (`Agent(listeners=...)`, given when the session is
composed) of every completed message and every finished turn; it never calls back into
the session. `SessionRecorder` appends each message to the store as it happens, so a
crash loses at most the message in flight; `AfterAnswer` runs what follows a final
answer: memory's write policy and the session's title.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.llm.types import Message
    from aistack_tui.session.titles import Titler
    from aistack_tui.sessions.models import SessionInfo
    from aistack_tui.sessions.store import SessionStore
    from aistack_tui.tools.base import ToolContext
    from aistack_tui.wiring import Extensions


@dataclass
class CurrentSession:
    """The stored session the conversation goes to now: `/clear` and `/resume` change
    it under the same agent, so whoever writes asks here each time."""

    info: SessionInfo

    @property
    def id(self) -> str:
        return self.info.id


@dataclass
class SessionRecorder:
    """Appends every completed message to the current stored session."""

    store: SessionStore
    current: CurrentSession

    async def on_message(self, message: Message) -> None:
        await self.store.append(self.current.id, message)

    async def on_turn_end(self, turn: int) -> None:
        return None

    async def on_error(self, error: BaseException) -> None:
        return None


@dataclass
class AfterAnswer:
    """Once the model has answered (its last message has no tool call): memory's write
    policy and task state, then the session's title, once."""

    agent: Callable[[], Agent]
    """The agent these follow (made after its listeners, so asked when needed)."""
    extensions: Extensions
    titler: Titler
    current: CurrentSession
    context: ToolContext

    async def on_message(self, message: Message) -> None:
        return None

    async def on_turn_end(self, turn: int) -> None:
        agent = self.agent()
        last = agent.messages[-1] if agent.messages else None
        if last is not None and last.role == "assistant" and not last.tool_uses():
            await self.extensions.after_turn(agent, self.current.id, self.context)
            await self.titler.name_once(agent.messages, agent.totals)

    async def on_error(self, error: BaseException) -> None:
        return None
