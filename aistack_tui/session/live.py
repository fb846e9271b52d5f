"""The live session: the one typed facade every front end talks to.

The TUI, print mode, the line mode and the channels (ACP, Telegram) hold a `LiveSession`
and nothing else from the core: they send prompts, steer, interrupt, switch the mode and
the model, and read usage, denials, tools and MCP states through it, and they consume the
agent's events (`agent/events.py`). Approvals reach a front end through the
`ApprovalHandler` it passed to `bootstrap.open_session`. Keeping every reach into the
agent, the permission engine and the stores behind this class is what lets a new front
end be written without reading the core.

`LiveSession` is a door, not a house: each method hands the call to the part that owns
it, made by the composition root (`bootstrap.py`): `turns` (session/turns.py: prompts,
steering, interrupts, `!commands`, command files), `models` (session/models.py),
`conversation` (session/conversation.py: new, resume, undo, rewind, export, titles,
usage), `permissions` (session/permission_views.py) and `workspace`
(session/workspace.py: MCP, skills, memory, subagents, hooks, directories, the editor).
Memory and skills come out as views and commands, never as their managers.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.session.conversation import Conversation, ExportFormat
from aistack_tui.session.memory_view import MemoryView, SkillsView
from aistack_tui.session.models import ModelControl
from aistack_tui.session.permission_views import (
    SESSION_RULES,
    PermissionViews,
    RuleTarget,
    RuleView,
)
from aistack_tui.session.status import StatusLine, status_lines
from aistack_tui.session.turns import TurnControl, UserCommand
from aistack_tui.session.workspace import ContextReport, InjectedContext, Workspace
from aistack_tui.trust_gate import TrustDecision

if TYPE_CHECKING:
    from aistack_tui.agent import events as ev
    from aistack_tui.agent.compaction import CompactionResult
    from aistack_tui.agent.hooks import HookGroup
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.agent.usage import UsageTotals
    from aistack_tui.checkpoints.manager import CheckpointManager, TurnRecord, UndoResult
    from aistack_tui.llm import types as lt
    from aistack_tui.mcp.manager import ServerStatus
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.permissions.types import Behavior, PermissionDenial, PermissionMode
    from aistack_tui.sandbox.base import Sandbox
    from aistack_tui.session.config import RunConfig
    from aistack_tui.session.mcp_view import McpView
    from aistack_tui.session.providers import ModelRouter
    from aistack_tui.sessions.models import SessionInfo
    from aistack_tui.sessions.sqlite_store import SqliteSessionStore
    from aistack_tui.settings.trust import TrustItem
    from aistack_tui.skills.commands import CommandSet
    from aistack_tui.subagent_types import Subagents
    from aistack_tui.tools.background import BackgroundShells
    from aistack_tui.tools.base import ToolCallDisplay, ToolContext
    from aistack_tui.tools.services import EditorTerminal, FileReader, FileWriter
    from aistack_tui.wiring import Extensions

__all__ = [
    "SESSION_RULES",
    "ContextReport",
    "EditorTerminal",
    "ExportFormat",
    "FileReader",
    "FileWriter",
    "InjectedContext",
    "LiveSession",
    "MemoryView",
    "RuleTarget",
    "RuleView",
    "SkillsView",
    "UserCommand",
]

log = logging.getLogger(__name__)


class LiveSession:
    """A running session: its parts behind the methods a front end needs.

    `agent`, `engine`, `store`, `extensions`, `tool_context` and `checkpoints` are what
    the parts were made from, there for tests and the composition root; front ends use
    the methods."""

    def __init__(
        self,
        *,
        config: RunConfig,
        agent: Agent,
        engine: PermissionEngine,
        store: SqliteSessionStore,
        tool_context: ToolContext,
        extensions: Extensions,
        turns: TurnControl,
        models: ModelControl,
        conversation: Conversation,
        permissions: PermissionViews,
        workspace: Workspace,
        router: ModelRouter | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.config = config
        self.agent = agent
        self.engine = engine
        self.store = store
        self.tool_context = tool_context
        self.extensions = extensions
        self.turns = turns
        self.models = models
        self.conversation = conversation
        self.permissions = permissions
        self.workspace = workspace
        self._router = router
        self._sandbox = sandbox
        self._closed = False

    @property
    def checkpoints(self) -> CheckpointManager | None:
        return self.conversation.checkpoints

    @property
    def project_root(self) -> Path:
        return self.config.project_root

    @property
    def cwd(self) -> Path:
        return self.config.cwd

    async def run(
        self, prompt: str | list[lt.ContentBlock]
    ) -> AsyncGenerator[ev.AgentEvent, None]:
        """One user turn: every event until (and including) `TurnEnded`.

        Closing the generator early (a front end cancelled on Esc) closes the agent's
        stream, whose `finally` blocks persist what was said so far.
        """
        async with contextlib.aclosing(self.turns.run(prompt)) as events:
            async for event in events:
                yield event

    def status(self) -> list[StatusLine]:
        """What `/status` shows: version, model, key source, mode, sandbox, MCP servers,
        settings files, instruction and identity files (session/status.py)."""
        return status_lines(
            self.config,
            session_id=self.session_id,
            model=self.model,
            mode=self.mode,
            mcp=[(s.name, s.status) for s in self.mcp_statuses()],
            untrusted_kinds={item.kind for item in self.untrusted},
        )

    async def doctor(self) -> str:
        """`aistack doctor`'s report for this session's settings (the TUI's `/doctor`)."""
        from aistack_tui.session.doctor import doctor_report  # the checks' own imports

        out = io.StringIO()
        untrusted = self.untrusted
        await doctor_report(self.config, TrustDecision(list(untrusted), list(untrusted)), out)
        return out.getvalue()

    async def close(self, reason: str = "other") -> None:
        """Record usage and close everything the session opened; safe to call twice.
        SessionEnd hooks run first, with `reason` (`prompt_input_exit` when the user quit,
        `logout`, `other`).

        Every part is closed even when another fails (the failure is logged): one
        database left open is a thread that keeps the process from exiting.
        """
        if self._closed:
            return
        self._closed = True
        if self.agent.hook_runner is not None:
            try:
                await self.agent.hook_runner.session_end(reason)
            except Exception:  # a broken hook must not keep the session open
                log.exception("SessionEnd hook failed")
        closers: list[Callable[[], Awaitable[None]]] = [
            self.conversation.record_usage,
            # No background shell outlives its session (tools/background.py).
            self.background_shells.aclose,
            self.extensions.aclose,
        ]
        if self._router is not None:
            closers.append(self._router.aclose)
        closers += [self.agent.provider.aclose, self.store.close, self._close_sandbox]
        for close in closers:
            try:
                await close()
            except Exception:
                log.warning("closing the session: %s failed", close, exc_info=True)

    async def _close_sandbox(self) -> None:
        if self._sandbox is not None:
            await asyncio.to_thread(self._sandbox.close)

    # --- turns: turns.py ------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.turns.running

    def take_notices(self) -> list[ev.Notice]:
        """Notices raised while the session opened (shown before the first turn)."""
        return self.turns.take_notices()

    def notify(self, text: str, level: str = "warning") -> None:
        """A notice the agent emits with its next events."""
        self.turns.notify(text, level)

    def add_model_note(self, text: str) -> None:
        """Something the model reads with the next prompt (a `!command`'s output)."""
        self.turns.add_model_note(text)

    async def run_user_command(self, command: str, timeout: float = 120.0) -> UserCommand:
        """`!command`."""
        return await self.turns.run_user_command(command, timeout)

    def allow_during_next_run(self, rules: Sequence[str]) -> None:
        """Rules allowed without asking during the next `run` only."""
        self.turns.allow_during_next_run(rules)

    def steer(self, text: str) -> None:
        """A message for the running turn, delivered at the agent's next opportunity."""
        self.turns.steer(text)

    def follow_up(self, text: str) -> None:
        """A message sent as the next prompt once the running turn has ended."""
        self.turns.follow_up(text)

    def interrupt(self) -> None:
        """Stop the running turn."""
        self.turns.interrupt()

    def take_queued(self) -> list[str]:
        """Steering and follow-ups the agent did not get to before its run ended."""
        return self.turns.take_queued()

    def custom_commands(self) -> CommandSet:
        return self.turns.custom_commands()

    async def prepare_command_prompt(self, text: str, allowed_tools: Sequence[str]) -> str:
        """A command file's expanded text, ready to send."""
        return await self.turns.prepare_command_prompt(text, allowed_tools)

    # --- models: models.py ----------------------------------------------------
    @property
    def model(self) -> str:
        """`provider/model` of the main model."""
        return self.models.model

    @property
    def context_window(self) -> int:
        return self.models.context_window

    @property
    def context_tokens(self) -> int:
        """Tokens the last request used, to show `ctx %`."""
        return self.models.context_tokens

    async def switch_model(self, model_string: str) -> None:
        """Use another model from the next request on."""
        await self.models.switch_model(model_string)

    async def log_in(self, provider: str, api_key: str) -> str | None:
        return await self.models.log_in(provider, api_key)

    def available_models(self) -> list[str]:
        """Models to offer in a picker."""
        return self.models.available_models()

    async def model_catalogue(self) -> list[str]:
        """`available_models` off the event loop, on a thread of its own."""
        return await self.models.model_catalogue()

    async def refresh_model_listings(self, timeout: float) -> dict[str, str]:
        return await self.models.refresh_model_listings(timeout)

    # --- conversation: conversation.py ----------------------------------------
    @property
    def info(self) -> SessionInfo:
        """The stored session the conversation goes to now."""
        return self.conversation.info

    @property
    def session_id(self) -> str:
        return self.conversation.session_id

    @property
    def title(self) -> str | None:
        return self.conversation.title

    @property
    def messages(self) -> Sequence[lt.Message]:
        return self.conversation.messages

    @property
    def usage(self) -> UsageTotals:
        return self.conversation.usage

    def replay_display(
        self, name: str, tool_input: dict[str, Any], result: str, is_error: bool
    ) -> ToolCallDisplay | None:
        """How a stored call and its result are shown again (a resumed session's tool card)."""
        return self.conversation.replay_display(name, tool_input, result, is_error)

    async def compact(self, instructions: str = "") -> CompactionResult | None:
        """Summarise the conversation now."""
        return await self.conversation.compact(instructions)

    @property
    def checkpoints_on(self) -> bool:
        return self.conversation.checkpoints_on

    def checkpoint_turns(self) -> list[TurnRecord]:
        """Turns of this session that changed files, oldest first."""
        return self.conversation.checkpoint_turns()

    async def undo(self, *, force: bool = False) -> UndoResult:
        """Restore the files of the last turn that changed any."""
        return await self.conversation.undo(force=force)

    async def rewind(self, turn: str, *, force: bool = False) -> UndoResult:
        return await self.conversation.rewind(turn, force=force)

    async def export_text(self, fmt: ExportFormat = "md") -> tuple[str, int]:
        """The conversation as Markdown or JSONL, and how many messages it holds."""
        return await self.conversation.export_text(fmt)

    async def export(self, path: Path, fmt: ExportFormat = "md") -> int:
        """Write the conversation to `path`."""
        return await self.conversation.export(path, fmt)

    async def new_conversation(self) -> None:
        await self.conversation.new_conversation()

    async def resume(self, session_id: str) -> None:
        await self.conversation.resume(session_id)

    def adopt_stored_totals(self) -> None:
        self.conversation.adopt_stored_totals()

    async def list_sessions(self) -> list[SessionInfo]:
        return await self.conversation.list_sessions()

    async def first_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """What the user typed first in each session."""
        return await self.conversation.first_prompts(session_ids)

    async def stored_title(self) -> str | None:
        return await self.conversation.stored_title()

    # --- permissions: permission_views.py -------------------------------------
    @property
    def mode(self) -> PermissionMode:
        return self.permissions.mode

    def set_mode(self, mode: str) -> PermissionMode:
        """Switch the permission mode."""
        return self.permissions.set_mode(mode)

    @property
    def denials(self) -> list[PermissionDenial]:
        return self.permissions.denials

    @property
    def untrusted(self) -> list[TrustItem]:
        """What the project's files asked for that this session left out (not trusted)."""
        return self.permissions.untrusted

    def permission_rules(self) -> list[RuleView]:
        """Every rule in force."""
        return self.permissions.permission_rules()

    def session_grants(self) -> list[str]:
        return self.permissions.session_grants()

    def add_permission_rule(self, behavior: Behavior, rule: str, layer: RuleTarget) -> str:
        """Add a rule (`/permissions add`) to `layer`, in force at once."""
        return self.permissions.add_permission_rule(behavior, rule, layer)

    def revoke_grant(self, rule: str) -> bool:
        """Forget a "don't ask again this session" rule."""
        return self.permissions.revoke_grant(rule)

    # --- workspace: workspace.py ----------------------------------------------
    @property
    def memory(self) -> MemoryView | None:
        """Long-term memory as views and commands; None when it is off."""
        return self.workspace.memory

    @property
    def skills(self) -> SkillsView | None:
        """The skills the model can load; None when none are loaded."""
        return self.workspace.skills

    def tool_names(self) -> list[str]:
        """The tools the model is offered now (WebSearch only with a searching provider)."""
        return self.workspace.tool_names()

    def join_hooks(
        self,
        groups: Mapping[str, Sequence[HookGroup]],
        call_back: Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]],
    ) -> None:
        """A client program's hooks join the session's own (they run at the same points)."""
        self.workspace.join_hooks(groups, call_back)

    def add_directory(self, raw: str) -> Path:
        """`/add-dir`."""
        return self.workspace.add_directory(raw)

    def subagents(self) -> Subagents:
        return self.workspace.subagents()

    def use_editor_files(self, reader: FileReader | None, writer: FileWriter | None) -> None:
        self.workspace.use_editor_files(reader, writer)

    def use_editor_terminal(self, terminal: EditorTerminal | None) -> None:
        self.workspace.use_editor_terminal(terminal)

    def mcp_statuses(self) -> list[ServerStatus]:
        return self.workspace.mcp_statuses()

    def mcp_tools(self) -> dict[str, list[str]]:
        """Tool names per connected server."""
        return self.workspace.mcp_tools()

    async def mcp_reconnect(self, name: str) -> ServerStatus:
        return await self.workspace.mcp_reconnect(name)

    @property
    def mcp(self) -> McpView:
        """MCP prompts (slash commands), `@server:uri` resources and elicitation."""
        return self.workspace.mcp

    def on_tool_output(self, listener: Callable[[str, str], None] | None) -> None:
        self.workspace.on_tool_output(listener)

    @property
    def background_shells(self) -> BackgroundShells:
        """The shells `Bash(run_in_background)` started in this session (`/bashes`)."""
        return self.workspace.background_shells

    def on_background_change(self, listener: Callable[[int], None]) -> None:
        """Call `listener(running)` whenever a background shell starts or ends."""
        self.workspace.on_background_change(listener)

    def on_mcp_status(self, listener: Callable[[ServerStatus], None]) -> None:
        """Call `listener` whenever an MCP server changes state."""
        self.workspace.on_mcp_status(listener)

    def on_index_phase(self, listener: Callable[[str], None]) -> None:
        self.workspace.on_index_phase(listener)

    async def wait_for_mcp(self, timeout: float) -> None:
        """Wait (bounded) for MCP servers so their tools are in the first request."""
        await self.workspace.wait_for_mcp(timeout)

    async def context_report(self) -> ContextReport:
        return await self.workspace.context_report()
