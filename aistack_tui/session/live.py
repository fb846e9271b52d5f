"""The live session: the one typed facade every front end talks to.

The TUI, print mode, the line mode and the channels (ACP, Telegram) hold a `LiveSession`
and nothing else from the core: they send prompts, steer, interrupt, switch the mode and
the model, and read usage, denials, tools and MCP states through it, and they consume the
agent's events (`agent/events.py`). Approvals reach a front end through the
`ApprovalHandler` it passed to `bootstrap.open_session`. Keeping every reach into the
agent, the permission engine and the stores behind this class is what lets a new front
end be written without reading the core.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from aistack_tui.settings.layers import ConfigError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from aistack_tui.agent import events as ev
    from aistack_tui.agent.compaction import CompactionResult
    from aistack_tui.agent.hooks import HookGroup
    from aistack_tui.agent.runtime import Agent, UsageTotals
    from aistack_tui.checkpoints.manager import CheckpointManager, TurnRecord, UndoResult
    from aistack_tui.llm import types as lt
    from aistack_tui.mcp.manager import ServerStatus
    from aistack_tui.memory.manager import MemoryManager
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.permissions.types import Behavior, PermissionDenial, PermissionMode
    from aistack_tui.sandbox.base import Sandbox
    from aistack_tui.session.config import RunConfig
    from aistack_tui.session.mcp_view import McpView
    from aistack_tui.session.providers import ModelRouter
    from aistack_tui.session.recorder import CurrentSession
    from aistack_tui.session.status import StatusLine
    from aistack_tui.session.titles import Titler
    from aistack_tui.sessions.models import SessionInfo
    from aistack_tui.sessions.sqlite_store import SqliteSessionStore
    from aistack_tui.settings.trust import TrustItem
    from aistack_tui.skills.commands import CommandSet
    from aistack_tui.skills.registry import SkillRegistry
    from aistack_tui.subagent_types import Subagents
    from aistack_tui.tools.background import BackgroundShells
    from aistack_tui.tools.base import ToolCallDisplay, ToolContext
    from aistack_tui.tools.services import EditorTerminal, FileReader, FileWriter
    from aistack_tui.wiring import Extensions

Prompt = "str | list[lt.ContentBlock]"
ExportFormat = Literal["md", "jsonl"]


@dataclass(frozen=True, slots=True)
class UserCommand:
    """A `!command` the user ran: its output as kept for the model, and its exit code."""

    command: str
    output: str
    exit_code: int


RuleTarget: TypeAlias = Literal["session", "local", "project", "user"]
"""Where `/permissions add` puts a rule."""
SESSION_RULES = "this session"
"""The source of ask and deny rules added for the session only."""


@dataclass(frozen=True, slots=True)
class RuleView:
    """One permission rule as `/permissions` lists it."""

    behavior: Literal["allow", "ask", "deny"]
    rule: str
    source: str
    """The settings layer it came from, or "session grant"."""
    scope: str = ""
    """`user`, `project`, `local` (each maybe ` (Claude Code)`), `environment`,
    `command line`, or `session` for a grant."""


@dataclass(frozen=True, slots=True)
class InjectedContext:
    memory: str
    knowledge: str
    budget: int


@dataclass(frozen=True, slots=True)
class ContextReport:
    """What fills the context window, for `/context`."""

    used_tokens: int
    window: int
    messages: int
    system_prompt_tokens: int
    tool_count: int
    tool_tokens: int
    injected: InjectedContext | None
    memory_on: bool
    code_index: dict[str, Any] | None
    """`files`, `symbols`, `chunks`, `refreshing`; None when the index is off."""


class LiveSession:
    """A running session: the agent plus the stores, engine and extensions it was built
    from, behind the methods a front end needs."""

    def __init__(
        self,
        *,
        config: RunConfig,
        agent: Agent,
        engine: PermissionEngine,
        store: SqliteSessionStore,
        current: CurrentSession,
        tool_context: ToolContext,
        model_string: str,
        extensions: Extensions,
        titler: Titler,
        subagents: Subagents,
        router: ModelRouter | None = None,
        untrusted: list[TrustItem] | None = None,
        checkpoints: CheckpointManager | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.config = config
        self.agent = agent
        self.engine = engine
        self.store = store
        self._current = current
        self.tool_context = tool_context
        self.extensions = extensions
        self.router = router
        self.checkpoints = checkpoints
        self._sandbox = sandbox
        self._subagents = subagents
        self._titler = titler
        self._untrusted = list(untrusted or [])
        self._next_run_rules: list[str] = []
        self._model_string = model_string
        self._recorded_usage = agent.totals.usage
        self._recorded_cost = agent.totals.cost_usd or 0.0
        self._closed = False

    # --- identity and state --------------------------------------------------------------

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
    def model(self) -> str:
        """`provider/model` of the main model."""
        return self._model_string

    @property
    def context_window(self) -> int:
        return self.agent.model_info.context_window

    @property
    def context_tokens(self) -> int:
        """Tokens the last request used, to show `ctx %`."""
        return self.agent.last_context_tokens

    @property
    def project_root(self) -> Path:
        return self.config.project_root

    @property
    def cwd(self) -> Path:
        return self.config.cwd

    @property
    def messages(self) -> Sequence[lt.Message]:
        """The conversation so far (a copy: change it through the methods below)."""
        return tuple(self.agent.messages)

    @property
    def mode(self) -> PermissionMode:
        return self.engine.mode

    def set_mode(self, mode: str) -> PermissionMode:
        """Switch the permission mode; raises ValueError for a name that is not a mode."""
        from aistack_tui.permissions.modes import parse_mode

        parsed = parse_mode(mode)
        self.engine.mode = parsed
        self.config.permission_mode = parsed
        return parsed

    @property
    def usage(self) -> UsageTotals:
        return self.agent.totals

    @property
    def denials(self) -> list[PermissionDenial]:
        return list(self.agent.runner.denials)

    @property
    def untrusted(self) -> list[TrustItem]:
        """What the project's files asked for that this session left out (not trusted)."""
        return list(self._untrusted)

    @property
    def running(self) -> bool:
        return self.agent.running

    def tool_names(self) -> list[str]:
        """The tools the model is offered now (WebSearch only with a searching provider)."""
        return self.agent.runner.tools.offered_names()

    def replay_display(
        self, name: str, tool_input: dict[str, Any], result: str, is_error: bool
    ) -> ToolCallDisplay | None:
        """How a stored call and its result are shown again (a resumed session's tool
        card): as the live card showed them, as far as the call and result tell."""
        from aistack_tui.tools.replay import replay_display

        tool = self.agent.runner.tools.get(name)
        if tool is None:
            return None
        return replay_display(tool, tool_input, result, is_error, self.tool_context)

    def join_hooks(
        self,
        groups: Mapping[str, Sequence[HookGroup]],
        call_back: Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]],
    ) -> None:
        """A client program's hooks join the session's own (they run at the same points)."""
        assert self.agent.hook_runner is not None  # the composition root always makes one
        self.agent.hook_runner.join(groups, call_back)

    def take_notices(self) -> list[ev.Notice]:
        """Notices raised while the session opened (shown before the first turn)."""
        return self.agent.take_notices()

    def add_model_note(self, text: str) -> None:
        """Something the model reads with the next prompt (a `!command`'s output); tagged
        `<user-...>` so front ends leave it out of the transcript."""
        self.agent.add_model_note(text)

    async def run_user_command(self, command: str, timeout: float = 120.0) -> UserCommand:
        """`!command`: run the user's own shell command in the session's directory. Its
        output is kept as the Bash tool keeps it (the first 16 kB and the last 12 kB, the
        cut said) and is handed to the model with the next prompt."""
        from aistack_tui.tools.bash import HEAD_BYTES, TAIL_BYTES
        from aistack_tui.tools.process import Captured, kill_group, read_stream

        proc = await asyncio.create_subprocess_shell(
            command, cwd=self.cwd, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        captured = Captured.with_budget(HEAD_BYTES, TAIL_BYTES)
        assert proc.stdout is not None
        try:
            await asyncio.wait_for(read_stream(proc.stdout, captured), timeout)
            code = await proc.wait()
            timed_out = False
        except TimeoutError:
            await kill_group(proc)
            code, timed_out = 124, True
        output = captured.text() + ("\n(timed out)" if timed_out else "")
        self.add_model_note(
            f"<user-shell-command>{command}</user-shell-command>\n"
            f'<user-shell-output exit_code="{code}">\n{output}\n</user-shell-output>'
        )
        return UserCommand(command, output, code)

    def notify(self, text: str, level: str = "warning") -> None:
        """A notice the agent emits with its next events."""
        self.agent.notify(text, level)

    # --- turns ---------------------------------------------------------------------------

    async def run(
        self, prompt: str | list[lt.ContentBlock]
    ) -> AsyncGenerator[ev.AgentEvent, None]:
        """One user turn: every event until (and including) `TurnEnded`.

        Closing the generator early (a front end cancelled on Esc) closes the agent's
        stream, whose `finally` blocks persist what was said so far.
        """
        granted = self._grant_next_run_rules()
        try:
            async with contextlib.aclosing(self.agent.run(prompt)) as events:
                async for event in events:
                    yield event
        finally:
            for rule in granted:
                self.engine.revoke_session(rule)
        await self.record_usage()

    def allow_during_next_run(self, rules: Sequence[str]) -> None:
        """Rules allowed without asking during the next `run` only: a slash command's
        `allowed-tools`. Raises ConfigError for a rule that does not parse."""
        from aistack_tui.permissions.rules import RuleError, parse_rule

        for rule in rules:
            try:
                parse_rule(rule, "allowed-tools")
            except RuleError as e:
                raise ConfigError(str(e)) from e
        self._next_run_rules = list(rules)

    def _grant_next_run_rules(self) -> list[str]:
        """Grant the rules for this run; only the ones not granted already are returned
        (to be revoked after it), so a "don't ask again" grant outlives the run."""
        rules, self._next_run_rules = self._next_run_rules, []
        held = set(self.engine.session_grants())
        granted: list[str] = []
        for rule in rules:
            if rule not in held:
                self.engine.grant_session(rule)
                granted.append(rule)
                held.add(rule)
        return granted

    def steer(self, text: str) -> None:
        """A message for the running turn, delivered at the agent's next opportunity."""
        self.agent.steer(text)

    def follow_up(self, text: str) -> None:
        """A message sent as the next prompt once the running turn has ended."""
        self.agent.follow_up(text)

    def interrupt(self) -> None:
        """Stop the running turn: partial text kept, every open tool call answered."""
        self.agent.interrupt()

    def take_queued(self) -> list[str]:
        """Steering and follow-ups the agent did not get to before its run ended."""
        queues = self.agent.queues
        return queues.take_steering() + queues.take_follow_ups()

    # --- models --------------------------------------------------------------------------

    async def switch_model(self, model_string: str) -> None:
        """Use another model from the next request on; raises ConfigError if it can't."""
        from aistack_tui.session.providers import build_provider

        provider, info = build_provider(self.config, model_string)
        old = self.agent.provider
        self.agent.switch_model(provider, info)
        self._model_string = model_string
        await old.aclose()

    async def log_in(self, provider: str, api_key: str) -> str | None:
        """Save `api_key` for `provider` (in `$AISTACK_HOME`, mode 0600) and, when it is
        the current model's provider, use it from the next request on.

        Returns the environment variable that still overrides the saved key, if one is
        set (a key in the environment wins over a saved one), else None."""
        from aistack_tui.llm.registry import KNOWN_PROVIDERS
        from aistack_tui.session.config import save_credential

        save_credential(self.config.home, provider, api_key)
        known = KNOWN_PROVIDERS.get(provider)
        names = known.key_env_vars if known is not None else ()
        shadow = next((n for n in names if self.config.env.get(n)), None)
        if shadow is None and self.model.split("/", 1)[0] == provider:
            await self.switch_model(self.model)
        return shadow

    def available_models(self) -> list[str]:
        """Models to offer in a picker: the current one first, then the catalogue's."""
        from aistack_tui.session.providers import picker_models

        try:
            return picker_models(self.config, self.model)
        except Exception:  # a broken catalogue must not take the picker down
            return [self.model]

    async def model_catalogue(self) -> list[str]:
        """`available_models` off the event loop, on a thread of its own: the first call
        imports SDK modules (seconds), and the default executor may be busy indexing."""
        from aistack_tui.storage.disposable_thread import run_disposable

        return await run_disposable(self.available_models, "model-catalogue")

    async def refresh_model_listings(self, timeout: float) -> dict[str, str]:
        """Ask the models endpoints whose cached answer is missing or stale (the one at
        start-up failed, or is old) again now; returns what went wrong, by provider.
        `available_models` then includes what they answered."""
        from aistack_tui.llm.models_endpoint import refresh
        from aistack_tui.session.providers import provider_configs

        try:
            configs = provider_configs(self.config, self.model)
        except Exception as e:  # a broken provider entry: say so, keep the picker
            return {"settings": str(e)}
        return await refresh(configs, self.config.home, timeout=timeout)

    # --- permissions ---------------------------------------------------------------------

    def permission_rules(self) -> list[RuleView]:
        """Every rule in force: each settings layer's, then the session's grants."""
        from aistack_tui.settings.layers import layer_scope

        config = self.config
        views: list[RuleView] = []
        for layer in self.engine.layers:
            scope = "session rules" if layer.source == SESSION_RULES else layer_scope(
                layer.source, config.home, config.project_root, config.env)
            for behavior in ("deny", "ask", "allow"):
                for rule in getattr(layer, behavior):
                    views.append(RuleView(behavior, rule, layer.source, scope))
        views += [
            RuleView("allow", r, "session grant", "session") for r in self.session_grants()
        ]
        return views

    def session_grants(self) -> list[str]:
        return self.engine.session_grants()

    def add_permission_rule(self, behavior: Behavior, rule: str, layer: RuleTarget) -> str:
        """Add a rule (`/permissions add`) to `layer`, in force at once; returns where it
        went. A file layer's file is read and written back whole (other keys kept, as
        "yes and save" does); `session` lasts until the session ends. Raises ConfigError
        for a rule the settings loader would refuse, or a file that cannot be updated."""
        from aistack_tui.permissions.grants import append_rule
        from aistack_tui.permissions.rules import RuleError, parse_rule
        from aistack_tui.settings.layers import (
            local_settings_path,
            project_settings_path,
            user_settings_path,
        )

        root, home = self.config.project_root, self.config.home
        paths = {"local": local_settings_path(root), "project": project_settings_path(root),
                 "user": user_settings_path(home)}
        try:
            if layer == "session":
                parse_rule(rule, SESSION_RULES)
                if behavior == "allow":
                    self.engine.grant_session(rule.strip())
                else:
                    self.engine.add_rule(behavior, rule.strip(), SESSION_RULES)
                return "this session"
            path = paths[layer]
            append_rule(path, rule.strip(), behavior)
            self.engine.add_rule(behavior, rule.strip(), str(path))
        except RuleError as e:
            raise ConfigError(str(e)) from e
        return str(path)

    def revoke_grant(self, rule: str) -> bool:
        """Forget a "don't ask again this session" rule; False if there was none."""
        return self.engine.revoke_session(rule)

    # --- extensions ----------------------------------------------------------------------

    def add_directory(self, raw: str) -> Path:
        """`/add-dir`: another directory the agent may read and edit like the project for
        the rest of this session (permission rules, file tools and the sandbox's writable
        roots all see it). Raises ConfigError for a path that is not a directory or `/`."""
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = self.cwd / path
        path = Path(os.path.realpath(path))
        if not path.is_dir():
            raise ConfigError(f"{path} is not a directory")
        if path == Path(path.anchor):
            raise ConfigError("the root directory cannot be added; name a project folder")
        if path in self.engine.additional_directories or path == self.config.project_root:
            return path
        self.engine.additional_directories.append(path)
        self.tool_context.additional_directories.append(path)
        sandbox = self._sandbox
        writable = getattr(sandbox, "writable", None)
        if isinstance(writable, list):
            writable.append(path)  # pyright: ignore[reportUnknownMemberType]
        exposure = getattr(sandbox, "exposure", None)
        if exposure is not None:
            exposure.roots.append(path)
            exposure.prefetch()
        if self.extensions.mcp is not None:  # MCP servers' roots, and they are told
            self.extensions.mcp.set_roots(
                [self.config.project_root, *self.tool_context.additional_directories]
            )
        return path

    async def doctor(self) -> str:
        """`aistack doctor`'s report for this session's settings (the TUI's `/doctor`)."""
        import io

        from aistack_tui.session.doctor import doctor_report
        from aistack_tui.trust_gate import TrustDecision

        out = io.StringIO()
        await doctor_report(self.config, TrustDecision(list(self._untrusted),
                                                       list(self._untrusted)), out)
        return out.getvalue()

    def status(self) -> list[StatusLine]:
        """What `/status` shows: version, model, key source, mode, sandbox, MCP servers,
        settings files, instruction and identity files (session/status.py)."""
        from aistack_tui.session.status import status_lines

        return status_lines(
            self.config,
            session_id=self.session_id,
            model=self.model,
            mode=self.mode,
            mcp=[(s.name, s.status) for s in self.mcp_statuses()],
            untrusted_kinds={item.kind for item in self._untrusted},
        )

    def subagents(self) -> Subagents:
        """The custom subagents the Task tool offers (`.claude/agents/` and friends), with
        the files that were skipped and why."""
        return self._subagents

    def custom_commands(self) -> CommandSet:
        """The slash command files of the project and the user (`.claude/commands/`,
        `.aistack/commands/`), read now; a project command's `allowed-tools` only once
        the project's current version of it is trusted."""
        from aistack_tui.skills.commands import CommandSet
        from aistack_tui.trust_gate import untrusted_command_names

        user_home = Path(self.config.env.get("HOME", str(Path.home())))
        found = CommandSet.discover(self.config.project_root, self.config.home, user_home)
        found.withhold_allowed_tools(untrusted_command_names(self.config))
        return found

    async def expand_custom_command(self, text: str) -> str | None:
        """The prompt for `text` when it calls a custom command (`/review src/x.py`), its
        `allowed-tools` allowed for the next run; None when `text` calls none."""
        if not text.startswith("/") or text.startswith("//"):
            return None
        name, _, arguments = text[1:].partition(" ")
        found = self.custom_commands().get(name.strip())
        if found is None:
            return None
        return await self.prepare_command_prompt(found.expand(arguments.strip()),
                                                 found.allowed_tools)

    async def prepare_command_prompt(self, text: str, allowed_tools: Sequence[str]) -> str:
        """A command file's expanded text, ready to send: its `` !`command` `` lines run
        (with its `allowed-tools` granted while they are checked) and replaced by their
        output; its `allowed-tools` are then allowed for the next run. `@path` mentions
        in it attach their files as in any prompt (`session.mentions.prompt_blocks`)."""
        from aistack_tui.session.command_shell import inline_shell_output

        self.allow_during_next_run(allowed_tools)
        granted = self._grant_next_run_rules()
        self._next_run_rules = list(allowed_tools)
        try:
            return await inline_shell_output(text, self.engine, self.tool_context, self.cwd)
        finally:
            for rule in granted:
                self.engine.revoke_session(rule)

    def use_editor_files(self, reader: FileReader | None, writer: FileWriter | None) -> None:
        """Read and write text files through the editor driving this session (ACP's `fs`):
        Read sees its buffers, Write and Edit hand it their final text. Permission checks,
        checkpoints, stale-read checks and diffs stay the session's own; a call the editor
        fails falls back to the disk. Only one of the two may be given; None, None stops."""
        from aistack_tui.tools.services import EditorFiles

        services = self.tool_context.services
        if reader is None and writer is None:
            services.editor_files = None
            return
        services.editor_files = EditorFiles(read=reader, write=writer)

    def use_editor_terminal(self, terminal: EditorTerminal | None) -> None:
        """Run Bash commands in the editor's terminals (ACP's `terminal`), inside the same
        sandbox and tier as here (the editor gets the sandbox's argv); None stops."""
        self.tool_context.services.editor_terminal = terminal

    def mcp_statuses(self) -> list[ServerStatus]:
        mcp = self.extensions.mcp
        return mcp.statuses() if mcp is not None else []

    def mcp_tools(self) -> dict[str, list[str]]:
        """Tool names per connected server."""
        mcp = self.extensions.mcp
        tools: dict[str, list[str]] = {}
        for remote in mcp.remote_tools() if mcp is not None else []:
            tools.setdefault(remote.server, []).append(remote.name)
        return tools

    async def mcp_reconnect(self, name: str) -> ServerStatus:
        mcp = self.extensions.mcp
        if mcp is None or name not in {s.name for s in mcp.statuses()}:
            raise ConfigError(f"no MCP server {name!r}")
        return await mcp.reconnect(name)

    @property
    def mcp(self) -> McpView:
        """MCP prompts (slash commands), `@server:uri` resources and elicitation."""
        from aistack_tui.session.mcp_view import McpView

        return McpView(self.extensions.mcp, self.engine)

    def on_tool_output(self, listener: Callable[[str, str], None] | None) -> None:
        """`listener(tool_use_id, text)` sees what a running Bash command prints, whole
        lines with secrets masked, as it prints them, and the progress MCP tools report
        (None stops it)."""
        self.tool_context.services.tool_output = listener

    @property
    def background_shells(self) -> BackgroundShells:
        """The shells `Bash(run_in_background)` started in this session (`/bashes`)."""
        from aistack_tui.tools.background import shells_of

        return shells_of(self.tool_context)

    def on_background_change(self, listener: Callable[[int], None]) -> None:
        """Call `listener(running)` whenever a background shell starts or ends."""
        shells = self.background_shells
        shells.on_change = lambda: listener(len(shells.running()))

    def on_mcp_status(self, listener: Callable[[ServerStatus], None]) -> None:
        """Call `listener` whenever an MCP server changes state."""
        if self.extensions.mcp is not None:
            self.extensions.mcp.add_listener(listener)

    def on_index_phase(self, listener: Callable[[str], None]) -> None:
        """Call `listener` with what the code index is doing ("queued", "scanning",
        "parsing", "embedding", "ranking"; "" when idle) now and at every change, so a
        status line can say a first build is running while turns go on without it."""
        knowledge = self.extensions.knowledge
        if knowledge is not None:
            knowledge.add_listener(listener)
            listener(knowledge.phase)

    async def wait_for_mcp(self, timeout: float) -> None:
        """Wait (bounded) for MCP servers so their tools are in the first request."""
        await self.extensions.wait_for_mcp(
            timeout, self.agent.runner.tools, self.agent.model_info.context_window
        )

    @property
    def memory(self) -> MemoryManager | None:
        """Long-term memory (list, write, forget, pin, search), None when it is off."""
        return self.extensions.memory

    @property
    def skills(self) -> SkillRegistry | None:
        return self.extensions.skills

    async def context_report(self) -> ContextReport:
        from aistack_tui.llm.tokens import estimate_tokens

        agent = self.agent
        specs = agent.runner.tools.specs()
        injector = self.extensions.injector
        last = injector.last if injector is not None else None
        injected = (
            InjectedContext(last.memory, last.knowledge, last.budget)
            if last is not None and (last.memory or last.knowledge)
            else None
        )
        knowledge = self.extensions.knowledge
        return ContextReport(
            used_tokens=agent.last_context_tokens,
            window=agent.model_info.context_window,
            messages=len(agent.messages),
            system_prompt_tokens=estimate_tokens(agent.system_prompt),
            tool_count=len(specs),
            tool_tokens=estimate_tokens(json.dumps([s.model_dump() for s in specs])),
            injected=injected,
            memory_on=self.extensions.memory is not None,
            code_index=await knowledge.status() if knowledge is not None else None,
        )

    # --- history: compact, undo, rewind, export ------------------------------------------

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
        from aistack_tui.agent.compaction import start_from_last_summary
        from aistack_tui.checkpoints.wiring import rewind_stored_session
        from aistack_tui.llm.notes import typed_text

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
        from aistack_tui.sessions.export import to_jsonl, to_markdown

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

    # --- conversations -------------------------------------------------------------------

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
        from aistack_tui.agent.compaction import start_from_last_summary

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
        from aistack_tui.agent.runtime import UsageTotals
        from aistack_tui.llm.types import Usage

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
        from aistack_tui.llm.tokens import estimate_message_tokens, estimate_tokens

        agent = self.agent
        tools = json.dumps([spec.model_dump() for spec in agent.runner.tools.specs()])
        return (estimate_tokens(agent.system_prompt) + estimate_tokens(tools)
                + sum(estimate_message_tokens(m) for m in agent.messages))

    async def list_sessions(self) -> list[SessionInfo]:
        return await self.store.list(self.config.project_root)

    async def first_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """What the user typed first in each session: the session picker shows it, as a
        title may be the title model's summary rather than the user's words."""
        from aistack_tui.llm.notes import typed_text

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

    async def name_once(self) -> None:
        """Give the session a short title from the router's `title` model, once."""
        await self._titler.name_once(self.agent.messages, self.agent.totals)

    async def record_usage(self) -> None:
        """Store the usage and cost added since the last call."""
        from aistack_tui.llm.types import Usage

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
            self.record_usage,
            # No background shell outlives its session (tools/background.py).
            self.background_shells.aclose,
            self.extensions.aclose,
        ]
        if self.router is not None:
            closers.append(self.router.aclose)
        closers += [self.agent.provider.aclose, self.store.close, self._close_sandbox]
        for close in closers:
            try:
                await close()
            except Exception:
                log.warning("closing the session: %s failed", close, exc_info=True)

    async def _close_sandbox(self) -> None:
        if self._sandbox is not None:
            await asyncio.to_thread(self._sandbox.close)
