"""Connect a CheckpointManager to a session's agent.

Two seams, both handed to the agent's parts when the session is composed: the tool
runner's `before_mutation` (called before every call that may change files, Bash
included) takes the turn's `before` snapshot, and a listener of the agent
(`CheckpointRecorder`) records the `after` snapshot whenever a batch of tool results
lands. The turn id is the id of the user message that started the turn, so a rewind cuts
the conversation — stored and live — at the same point it rewinds the files to.

A checkpoint that fails is reported as a notice and never blocks the tool call: losing
undo for one step is better than losing the user's work in progress. The session id is
asked each time: `/clear` and `/resume` change the session under the same agent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aistack_tui.checkpoints.manager import CheckpointError, CheckpointManager, UndoResult
from aistack_tui.llm.notes import typed_text
from aistack_tui.storage.db import DB_ERRORS, StorageError

if TYPE_CHECKING:
    from aistack_tui.agent.tool_runner import BeforeMutation
    from aistack_tui.llm.types import Message
    from aistack_tui.sessions.store import SessionStore

LABEL_CHARS = 80
Notify = Callable[[str, str], None]


def current_turn(messages: Sequence[Message]) -> tuple[str, str]:
    """(turn id, label): the latest user prompt (a user message that is not tool results)."""
    for message in reversed(messages):
        if message.role == "user" and not message.tool_results():
            text = " ".join(typed_text(message).split())  # not the model's notes
            label = text[: LABEL_CHARS - 1] + "…" if len(text) > LABEL_CHARS else text
            return message.id, label or "(no text)"
    return "start", "(before the first prompt)"


@dataclass
class CheckpointRecorder:
    """A listener of the agent: the `after` snapshot once a batch of tool results lands."""

    manager: CheckpointManager
    notify: Notify
    session_id: Callable[[], str]

    async def on_message(self, message: Message) -> None:
        if message.role == "user" and message.tool_results():
            try:
                await self.manager.record_after(self.session_id())
            except CheckpointError as e:
                self.notify(f"checkpoint failed: {e}", "warning")

    async def on_turn_end(self, turn: int) -> None:
        return None

    async def on_error(self, error: BaseException) -> None:
        return None


def snapshot_before_mutation(
    manager: CheckpointManager,
    messages: Callable[[], Sequence[Message]],
    notify: Notify,
    session_id: Callable[[], str],
) -> BeforeMutation:
    """The tool runner's `before_mutation`: the turn's `before` snapshot."""

    async def before_mutation(tool_use_id: str, tool_name: str, tool_input: dict[str, Any]) -> None:
        turn_id, label = current_turn(messages())
        try:
            await manager.snapshot(session_id(), turn_id, label)
        except CheckpointError as e:
            notify(f"checkpoint before {tool_name} failed: {e}", "warning")

    return before_mutation


async def rewind_stored_session(
    store: SessionStore,
    manager: CheckpointManager,
    session_id: str,
    turn_id: str,
    *,
    force: bool = False,
) -> UndoResult:
    """Restore files to before `turn_id` and cut the stored conversation at its prompt.

    The prompt and every later message are deleted from the store
    (`result.messages_cut` says how many), so resuming the session (`aistack -c`,
    `/resume`) does not bring the rewound turns back. This is all a front end without a
    live agent (`aistack rewind`) needs; `LiveSession.rewind` adds the live history.

    The files go first: when they cannot be restored (a conflict without `force`) the
    conversation is left whole. When the store cannot be written (locked, disk full)
    the files stay rewound and the result's message says the stored session was not cut.
    A turn whose prompt is not in the store cuts nothing.
    """
    result = await manager.rewind(session_id, turn_id, force=force)
    if not result.ok or not result.turns:
        return result
    prompt_id = result.turns[-1]
    with contextlib.suppress(StorageError, *DB_ERRORS):  # the prompt text is a convenience
        stored = await store.messages(session_id)
        result.prompt = next((typed_text(m) for m in stored if m.id == prompt_id), "")
    try:
        result.messages_cut = await store.truncate(session_id, prompt_id)
    except StorageError as e:
        result.message += f"; the stored conversation was not cut ({e})"
    return result
