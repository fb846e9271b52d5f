"""Connect a CheckpointManager to a live AgentSession.

Two seams: the tool runner's `before_mutation` (called before every call that may change
files, Bash included) takes the turn's `before` snapshot, and the agent's lifecycle hook
`on_message` records the `after` snapshot whenever a batch of tool results lands. The turn
id is the id of the user message that started the turn, so a front end can rewind the
conversation to the same point it rewinds the files to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aistack_tui.checkpoints.manager import CheckpointError, CheckpointManager, UndoResult

if TYPE_CHECKING:
    from aistack_tui.agent.ports import LifecycleHooks
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.bootstrap import AgentSession
    from aistack_tui.llm.types import Message

LABEL_CHARS = 80


def current_turn(agent: Agent) -> tuple[str, str]:
    """(turn id, label): the latest user prompt (a user message that is not tool results)."""
    for message in reversed(agent.messages):
        if message.role == "user" and not message.tool_results():
            text = " ".join(message.text().split())
            label = text[: LABEL_CHARS - 1] + "…" if len(text) > LABEL_CHARS else text
            return message.id, label or "(no text)"
    return "start", "(before the first prompt)"


@dataclass
class CheckpointHooks:
    """Lifecycle hooks that record the `after` snapshot, then delegate to the host's."""

    inner: LifecycleHooks
    manager: CheckpointManager
    session: AgentSession

    async def on_message(self, message: Message) -> None:
        await self.inner.on_message(message)
        if message.role == "user" and message.tool_results():
            try:
                await self.manager.record_after(self.session.info.id)
            except CheckpointError as e:
                self.session.agent.notify(f"checkpoint failed: {e}")

    async def on_turn_end(self, turn: int) -> None:
        await self.inner.on_turn_end(turn)

    async def on_error(self, error: BaseException) -> None:
        await self.inner.on_error(error)


def attach_checkpoints(session: AgentSession, manager: CheckpointManager) -> None:
    """Snapshot before every mutating tool call of `session` and after each tool batch.

    A checkpoint that fails is reported as a notice and never blocks the tool call:
    losing undo for one step is better than losing the user's work in progress.
    """
    agent = session.agent
    if manager.disabled_reason:
        agent.notify(manager.disabled_reason, "info")
        return

    async def before_mutation(tool_use_id: str, tool_name: str, tool_input: dict[str, Any]) -> None:
        turn_id, label = current_turn(agent)
        try:
            await manager.snapshot(session.info.id, turn_id, label)
        except CheckpointError as e:
            agent.notify(f"checkpoint before {tool_name} failed: {e}")

    agent.runner.before_mutation = before_mutation
    agent.hooks = CheckpointHooks(agent.hooks, manager, session)


async def rewind_session(
    session: AgentSession, manager: CheckpointManager, turn_id: str, *, force: bool = False
) -> UndoResult:
    """Restore files to before `turn_id` and cut the live conversation back to that prompt.

    Only the in-memory history is cut; the stored session keeps its messages (a front end
    that wants the store to match can fork the session from the result).
    """
    result = await manager.rewind(session.info.id, turn_id, force=force)
    if not result.ok or not result.turns:
        return result
    first = result.turns[-1]
    ids = [m.id for m in session.agent.messages]
    if first in ids:
        session.agent.messages = session.agent.messages[: ids.index(first)]
    return result
