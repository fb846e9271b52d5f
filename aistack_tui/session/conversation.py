"""The conversation's history: the stored session it goes to, new and resumed
conversations, undo and rewind, export, and the usage it has cost (titles: titles.py).

Part of the session facade (`session/live.py`); front ends reach it through `LiveSession`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from aistack_tui.agent.compaction import start_from_last_summary
from aistack_tui.agent.usage import UsageTotals
from aistack_tui.checkpoints.wiring import rewind_stored_session
from aistack_tui.llm.notes import typed_text
from aistack_tui.llm.tokens import estimate_message_tokens, estimate_tokens
from aistack_tui.llm.types import Usage
from aistack_tui.sessions.export import to_jsonl, to_markdown
from aistack_tui.settings.layers import ConfigError
from aistack_tui.tools.replay import replay_display

if TYPE_CHECKING:
    from aistack_tui.agent.compaction import CompactionResult
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.checkpoints.manager import CheckpointManager, TurnRecord, UndoResult
    from aistack_tui.llm import types as lt
    from aistack_tui.session.config import RunConfig
    from aistack_tui.session.recorder import CurrentSession
    from aistack_tui.sessions.models import SessionInfo
    from aistack_tui.sessions.sqlite_store import SqliteSessionStore
    from aistack_tui.tools.base import ToolCallDisplay, ToolContext

ExportFormat = Literal["md", "jsonl"]


class Conversation:
    """One conversation at a time over the same agent: `/clear` starts another, `/resume`
    returns to a stored one."""

    def __init__(
        self,
        *,
        agent: Agent,
        store: SqliteSessionStore,
        config: RunConfig,
        current: CurrentSession,
        tool_context: ToolContext,
        model: Callable[[], str],
        checkpoints: CheckpointManager | None = None,
    ) -> None:
        self.agent = agent
        self.store = store
        self.config = config
        self._current = current
        self.tool_context = tool_context
        self._model = model
        self.checkpoints = checkpoints
        self._recorded_usage = agent.totals.usage
        self._recorded_cost = agent.totals.cost_usd or 0.0

    @property
    def model(self) -> str:
        """`provider/model` of the main model now (usage is stored under it)."""
        return self._model()

    @property
    def info(self) -> SessionInfo:
        """The stored session the conversation goes to now."""
        return self._current.info

    @property
    def session_id(self) -> str:
        return self.info.id

    @property
    def title(self) -> str | None:
        return self.info.title

    @property
    def messages(self) -> Sequence[lt.Message]:
        """The conversation so far (a copy: change it through the methods below)."""
        return tuple(self.agent.messages)

    @property
    def usage(self) -> UsageTotals:
        return self.agent.totals

    def replay_display(
        self, name: str, tool_input: dict[str, Any], result: str, is_error: bool
    ) -> ToolCallDisplay | None:
        """How a stored call and its result are shown again (a resumed session's tool
        card): as the live card showed them, as far as the call and result tell."""

        tool = self.agent.runner.tools.get(name)
        if tool is None:
            return None
        return replay_display(tool, tool_input, result, is_error, self.tool_context)

    async def compact(self, instructions: str = "") -> CompactionResult | None:
        """Summarise the conversation now; None when it is too short to compact."""
        return await self.agent.compact_now(instructions)

    @property
    def checkpoints_on(self) -> bool:
        return self.checkpoints is not None

    def checkpoint_turns(self) -> list[TurnRecord]:
        """Turns of this session that changed files, oldest first."""
        return self.checkpoints.list_turns(self.session_id) if self.checkpoints else []

    async def undo(self, *, force: bool = False) -> UndoResult:
        """Restore the files of the last turn that changed any. The model is told with the
        next prompt (the note is for the model only; no front end shows it).

        A later turn that only *could* have changed files (it ran a command, or an edit
        that failed) is recorded too; it is undone on the way, as it changed nothing,
        so a follow-up question never turns /undo into "0 files restored"."""
        if self.checkpoints is None:
            raise ConfigError("checkpoints are off (settings `checkpoints`)")
        while True:
            turns = self.checkpoints.list_turns(self.session_id)
            result = await self.checkpoints.undo_last(self.session_id, force=force)
            if not result.ok or result.restored or result.removed or len(turns) <= 1:
                break
        if result.ok and not (result.restored or result.removed):
            result.message = "nothing to undo: no turn of this session changed files"
        elif result.ok:
            turn = turns[-1]
            result.message = (
                f"undid turn {len(turns)} ({turn.label}): {len(result.restored)} file(s) "
                f"restored, {len(result.removed)} removed"
                + (f", {len(result.conflicts)} overwritten by force" if result.conflicts else "")
            )
            self.agent.add_model_note(
                f"<user-undo>The user undid the file changes of your turn for the prompt "
                f"“{turn.label}”; files "
                f"restored: {', '.join(result.restored) or 'none'}; removed: "
                f"{', '.join(result.removed) or 'none'}.</user-undo>"
            )
        return result

    async def rewind(self, turn: str, *, force: bool = False) -> UndoResult:
        """Restore files to before `turn` (a number from `checkpoint_turns`, or a turn id)
        and cut the conversation, stored and live, back to that prompt."""

        if self.checkpoints is None:
            raise ConfigError("checkpoints are off (settings `checkpoints`)")
        result = await rewind_stored_session(
            self.store, self.checkpoints, self.session_id, turn, force=force
        )
        if not result.ok or not result.turns:
            return result
        first = result.turns[-1]
        ids = [m.id for m in self.agent.messages]
        if first in ids:
            if not result.prompt:
                result.prompt = typed_text(self.agent.messages[ids.index(first)])
            self.agent.messages = self.agent.messages[: ids.index(first)]
        elif result.messages_cut:
            stored = await self.store.messages(self.session_id)
            self.agent.messages = start_from_last_summary(stored)
        return result

    async def export_text(self, fmt: ExportFormat = "md") -> tuple[str, int]:
        """The conversation as Markdown or JSONL, and how many messages it holds."""

        info = await self.store.get(self.session_id) or self.info
        messages = self.agent.messages
        text = to_jsonl(messages) if fmt == "jsonl" else to_markdown(info, messages)
        return text, len(messages)

    async def export(self, path: Path, fmt: ExportFormat = "md") -> int:
        """Write the conversation to `path`; returns how many messages were written."""
        text, count = await self.export_text(fmt)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return count

    async def new_conversation(self) -> None:
        """Start over in a new stored session (the old one stays resumable): SessionEnd
        hooks with `clear` for the old, SessionStart hooks with `clear` for the new."""
        hooks = self.agent.hook_runner
        if hooks is not None:
            await hooks.session_end("clear")
        self._current.info = await self.store.create(self.config.project_root, self.model)
        self.agent.messages = []
        self.agent.clear_model_notes()
        self.agent.last_context_tokens = 0  # `ctx %` is of the conversation left behind
        if hooks is not None:
            hooks.session_id = self.info.id
            hooks.transcript_path = self.config.home / "transcripts" / f"{self.info.id}.jsonl"
            started = await hooks.session_start("clear")
            if started:
                self.agent.add_model_note(
                    f"<user-session-start-hook>\n{started}\n</user-session-start-hook>"
                )

    async def resume(self, session_id: str) -> None:
        info = await self.store.get(session_id)
        if info is None:
            raise ConfigError(f"no session {session_id!r} in this project")

        self._current.info = info
        self.agent.messages = start_from_last_summary(await self.store.messages(info.id))
        self.agent.clear_model_notes()
        self.adopt_stored_totals()

    def adopt_stored_totals(self) -> None:
        """A resumed session's stored tokens and cost become the totals (`/cost` and
        the status line know them at once; what follows adds to them and is stored as
        the difference), and `ctx %` is estimated until the next request reports it.

        `resume` does it; an interactive front end calls it for a session opened
        resumed (`-c`, `--resume`). Print mode does not: its result reports the cost
        of that one run."""

        info = self.info
        usage = Usage(
            input_tokens=info.input_tokens,
            output_tokens=info.output_tokens,
            cache_read_input_tokens=info.cache_read_input_tokens,
            cache_creation_input_tokens=info.cache_creation_input_tokens,
        )
        agent = self.agent
        agent.totals = UsageTotals(
            usage=usage,
            cost_usd=info.cost_usd or None,
            api_ms=agent.totals.api_ms,
            by_model={info.model: usage} if usage != Usage() else {},
        )
        self._recorded_usage, self._recorded_cost = usage, info.cost_usd
        agent.last_context_tokens = self._estimated_context()

    def _estimated_context(self) -> int:
        """What the next request will hold, until it reports the real count: the system
        prompt, the tools and the messages, estimated (so `ctx %` is known right after
        a resume)."""

        agent = self.agent
        tools = json.dumps([spec.model_dump() for spec in agent.runner.tools.specs()])
        return (estimate_tokens(agent.system_prompt) + estimate_tokens(tools)
                + sum(estimate_message_tokens(m) for m in agent.messages))

    async def list_sessions(self) -> list[SessionInfo]:
        return await self.store.list(self.config.project_root)

    async def first_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """What the user typed first in each session: the session picker shows it, as a
        title may be the title model's summary rather than the user's words."""

        found: dict[str, str] = {}
        for session_id in session_ids:
            for message in await self.store.messages(session_id):
                text = typed_text(message).strip() if message.role == "user" else ""
                if text:
                    found[session_id] = text
                    break
        return found

    async def stored_title(self) -> str | None:
        info = await self.store.get(self.session_id)
        return info.title if info is not None else self.info.title

    async def record_usage(self) -> None:
        """Store the usage and cost added since the last call."""

        totals = self.agent.totals
        usage, recorded = totals.usage, self._recorded_usage
        delta = usage - recorded
        cost = (totals.cost_usd or 0.0) - self._recorded_cost
        self._recorded_usage, self._recorded_cost = usage, totals.cost_usd or 0.0
        if delta != Usage():
            await self.store.record_usage(
                self.session_id, delta, cost if totals.cost_usd is not None else None,
                self.model,
            )
