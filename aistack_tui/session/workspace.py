"""The session's extensions and surroundings: MCP servers, skills, memory, the code
index, subagents, hooks, extra directories, the editor's files and terminals, background
shells, and what fills the context window.

Memory and skills are handed out as views and commands (`session/memory_view.py`), never
as their managers. Part of the session facade (`session/live.py`); front ends reach it
through `LiveSession`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.llm.tokens import estimate_tokens
from aistack_tui.session.mcp_view import McpView
from aistack_tui.session.memory_view import MemoryView, SkillsView
from aistack_tui.settings.layers import ConfigError
from aistack_tui.tools.background import BackgroundShells, shells_of
from aistack_tui.tools.services import EditorFiles

if TYPE_CHECKING:
    from aistack_tui.agent.hooks import HookGroup
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.mcp.manager import ServerStatus
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.sandbox.base import Sandbox
    from aistack_tui.session.config import RunConfig
    from aistack_tui.subagent_types import Subagents
    from aistack_tui.tools.base import ToolContext
    from aistack_tui.tools.services import EditorTerminal, FileReader, FileWriter
    from aistack_tui.wiring import Extensions


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
    """`KnowledgeIndex.status()`: `files`, `symbols`, `chunks`, `phase`...; None when the
    index is off."""


class Workspace:
    """What the session reaches beyond the conversation."""

    def __init__(
        self,
        *,
        agent: Agent,
        engine: PermissionEngine,
        config: RunConfig,
        tool_context: ToolContext,
        extensions: Extensions,
        subagents: Subagents,
        session_id: Callable[[], str],
        sandbox: Sandbox | None = None,
    ) -> None:
        self.agent = agent
        self.engine = engine
        self.config = config
        self.tool_context = tool_context
        self.extensions = extensions
        self._subagents = subagents
        self._sandbox = sandbox
        memory = extensions.memory
        self.memory = MemoryView(memory, session_id) if memory is not None else None
        """Long-term memory (list, remember, forget, pin, search); None when it is off."""
        self.skills = SkillsView(extensions.skills) if extensions.skills is not None else None
        """The skills the model can load, and problems found; None when none are loaded."""

    @property
    def cwd(self) -> Path:
        return self.config.cwd

    def tool_names(self) -> list[str]:
        """The tools the model is offered now (WebSearch only with a searching provider)."""
        return self.agent.runner.tools.offered_names()

    def join_hooks(
        self,
        groups: Mapping[str, Sequence[HookGroup]],
        call_back: Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]],
    ) -> None:
        """A client program's hooks join the session's own (they run at the same points)."""
        assert self.agent.hook_runner is not None  # the composition root always makes one
        self.agent.hook_runner.join(groups, call_back)

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

    def subagents(self) -> Subagents:
        """The custom subagents the Task tool offers (`.claude/agents/` and friends), with
        the files that were skipped and why."""
        return self._subagents

    def use_editor_files(self, reader: FileReader | None, writer: FileWriter | None) -> None:
        """Read and write text files through the editor driving this session (ACP's `fs`):
        Read sees its buffers, Write and Edit hand it their final text. Permission checks,
        checkpoints, stale-read checks and diffs stay the session's own; a call the editor
        fails falls back to the disk. Only one of the two may be given; None, None stops."""

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

        return McpView(self.extensions.mcp, self.engine)

    def on_tool_output(self, listener: Callable[[str, str], None] | None) -> None:
        """`listener(tool_use_id, text)` sees what a running Bash command prints, whole
        lines with secrets masked, as it prints them, and the progress MCP tools report
        (None stops it)."""
        self.tool_context.services.tool_output = listener

    @property
    def background_shells(self) -> BackgroundShells:
        """The shells `Bash(run_in_background)` started in this session (`/bashes`)."""

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

    async def context_report(self) -> ContextReport:
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
