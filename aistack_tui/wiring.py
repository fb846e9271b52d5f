"""Extensions of a session: skills, MCP servers, memory and code knowledge.

`bootstrap.open_session` calls `attach_extensions` once, before the tools' context is
made: the context's services are then built from what it returns. Each extension is
optional and imported only when configured, so a plain session pays nothing for them.
Everything opened here is closed by `Extensions.aclose`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.context.injection import ContextInjector
    from aistack_tui.mcp.config import ServerConfig
    from aistack_tui.mcp.manager import McpManager, ServerStatus
    from aistack_tui.memory.manager import MemoryManager
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.session.config import RunConfig
    from aistack_tui.skills.registry import SkillRegistry
    from aistack_tui.tools.base import Tool, ToolContext, ToolRegistry
    from aistack_tui.trust_gate import TrustDecision

log = logging.getLogger(__name__)
KNOWLEDGE_WATCH_INTERVAL = 5.0
"""Seconds between checks for changed files while a TUI session is open."""


@dataclass
class Extensions:
    skills: SkillRegistry | None = None
    mcp: McpManager | None = None
    memory: MemoryManager | None = None
    knowledge: Any = None
    injector: ContextInjector | None = None
    warnings: list[str] = field(default_factory=list)
    _todo_snapshot: str = ""

    def mcp_statuses(self) -> list[dict[str, str]]:
        if self.mcp is None:
            return []
        return [{"name": s.name, "status": s.status} for s in self.mcp.statuses()]

    async def wait_for_mcp(self, timeout: float, tools: ToolRegistry, context_window: int) -> None:
        """Print mode: wait (bounded) for servers so their tools are in the first request."""
        if self.mcp is None:
            return
        await self.mcp.wait_ready(timeout)
        register_mcp_tools(self.mcp, tools, context_window)

    def show_mcp_logs(self, notify: Callable[[str, str], None], verbose: bool) -> None:
        """Servers' log messages as notices in `--verbose` sessions (they always go to
        the server's log file); without it they would drown the conversation. A request
        for the user's input declined because nobody could answer is always a warning."""
        if self.mcp is None:
            return
        self.mcp.warning_listener = lambda text: notify(text, "warning")
        if verbose:
            self.mcp.log_listener = lambda server, level, text: notify(
                f"MCP {server} [{level}]: {text}", "info"
            )

    async def after_turn(self, agent: Agent, session_id: str, context: ToolContext) -> None:
        """Memory's write policy and task state, once the model has answered."""
        if self.memory is None:
            return
        from aistack_tui.tools.todo import render_todos

        todos = render_todos(context.todos) if context.todos else ""
        try:
            if todos != self._todo_snapshot:
                self._todo_snapshot = todos
                await self.memory.set_task_state(todos)
            await self.memory.after_turn(agent.messages, session_id)
        except Exception as e:  # memory is a help; a failure must not end the session
            log.warning("memory write failed: %s", e)

    def store_summary_for(self, session_id: str) -> Callable[[str], Awaitable[None]] | None:
        """Compaction's summary goes to memory's rolling-summary layer, when memory is on."""
        memory = self.memory
        if memory is None:
            return None

        async def store(summary: str) -> None:
            try:
                await memory.set_summary(summary, session_id)
            except Exception as e:
                log.warning("storing the compaction summary failed: %s", e)

        return store

    async def aclose(self) -> None:
        closers: list[Callable[[], Awaitable[None]]] = []
        if self.mcp is not None:
            closers.append(self.mcp.aclose)
        if self.memory is not None:
            closers.append(self.memory.close)
        if self.knowledge is not None:
            closers.append(self.knowledge.close)
        for close in closers:
            try:
                await close()
            except Exception as e:
                log.warning("closing an extension failed: %s", e)


MCP_TOOL_NAMES = {"McpToolSearch", "ListMcpResourcesTool", "ReadMcpResourceTool"}


def register_mcp_tools(mcp: McpManager, tools: ToolRegistry, context_window: int) -> None:
    for name in [n for n in tools.names() if n.startswith("mcp__") or n in MCP_TOOL_NAMES]:
        tools.unregister(name)
    from aistack_tui.mcp.tools import build_tools

    for tool in build_tools(mcp, context_window):
        tools.register(tool)


def attach_skills(
    config: RunConfig,
    tools: ToolRegistry,
    engine: PermissionEngine,
    *,
    trust: TrustDecision | None = None,
) -> SkillRegistry:
    from aistack_tui.skills.registry import Skill, SkillRegistry
    from aistack_tui.tools.skill import SkillTool

    user_home = Path(config.env.get("HOME", str(Path.home())))
    skills = SkillRegistry.discover(config.project_root, config.home, user_home)
    if trust is not None:
        skills.withhold_allowed_tools(trust.ignored_names("skill"))
    tools.register(SkillTool())

    def grant_allowed(skill: Skill) -> None:
        # A skill's `allowed-tools` are pre-approved while it is active.
        for rule in getattr(skill, "allowed_tools", ()) or ():
            try:
                engine.grant_session(rule)
            except ValueError as e:
                log.warning("skill %s: %s", skill.name, e)

    skills.add_listener(grant_allowed)
    return skills


def mcp_server_configs(
    config: RunConfig, trust: TrustDecision | None = None
) -> tuple[dict[str, ServerConfig], list[str]]:
    """Every MCP server of this run by name, and the warnings to show. Servers the user
    has not agreed to are left out before they are read, so nothing they would take from
    the environment (`${VAR}` in env, headers or URL) is ever expanded or sent anywhere."""
    from aistack_tui.mcp.config import load_mcp_config
    from aistack_tui.settings.layers import merge
    from aistack_tui.trust_gate import is_project_layer

    user_servers: dict[str, Any] = {}
    project_servers: list[tuple[str, Any]] = []
    for layer in config.loaded.layers:
        servers = layer.data.get("mcpServers")
        if servers is None:
            continue
        if is_project_layer(config, layer):
            project_servers.append((layer.source, servers))
        elif isinstance(servers, dict):
            user_servers = merge(user_servers, servers)  # pyright: ignore[reportUnknownArgumentType]
    return load_mcp_config(
        config.project_root, config.mcp_config, user_servers, config.env,
        project_servers=project_servers, client_servers=config.client_mcp_servers,
        withheld=trust.ignored_names("mcp") if trust is not None else (),
    )


async def attach_mcp(
    config: RunConfig,
    tools: ToolRegistry,
    roots: list[Path],
    context_window: int,
    *,
    trust: TrustDecision | None = None,
) -> tuple[McpManager | None, list[str]]:
    settings = config.loaded.settings
    configs, warnings = mcp_server_configs(config, trust)
    if not configs:
        return None, warnings
    from aistack_tui.mcp.manager import McpManager

    manager = McpManager(configs, config.home / "logs", settings.mcp_connect_timeout,
                         relay=config.mcp_relay, roots=roots)

    def on_status(status: ServerStatus) -> None:
        if status.status in ("connected", "failed", "disabled"):
            register_mcp_tools(manager, tools, context_window)

    manager.add_listener(on_status)
    await manager.start()
    return manager, warnings


async def attach_memory(
    config: RunConfig, session_id: str
) -> tuple[MemoryManager | None, list[Tool[Any]]]:
    """The memory manager and its tools (registered by the caller, in a fixed order)."""
    settings = config.loaded.settings
    if config.no_memory or not settings.memory_enabled:
        return None, []
    from aistack_tui.memory.manager import MemoryManager
    from aistack_tui.tools.memory_tools import MemorySearchTool, MemoryWriteTool

    manager = await MemoryManager.open(config.home, config.project_root, env=config.env)
    manager.session_id = session_id
    return manager, [MemorySearchTool(), MemoryWriteTool()]


async def attach_knowledge(
    config: RunConfig, engine: PermissionEngine, *, watch: bool
) -> tuple[Any, list[Tool[Any]]]:
    """The code index, refreshed in the background: the first turn never waits for it."""
    settings = config.loaded.settings
    if config.no_knowledge or not settings.knowledge_enabled:
        return None, []
    from aistack_tui.knowledge import KnowledgeIndex
    from aistack_tui.permissions.access import read_allowed
    from aistack_tui.tools.code_search import CodeSearchTool

    # Search results obey the Read rules.
    index = await KnowledgeIndex.open(
        config.home, config.project_root, read_allowed=read_allowed(engine)
    )
    index.start_background_refresh(
        watch_interval=KNOWLEDGE_WATCH_INTERVAL if watch else None, defer_first_build=True
    )
    return index, [CodeSearchTool()]


async def attach_extensions(
    config: RunConfig,
    *,
    tools: ToolRegistry,
    engine: PermissionEngine,
    session_id: str,
    context_window: int,
    interactive: bool = False,
    trust: TrustDecision | None = None,
) -> Extensions:
    from aistack_tui.context.injection import ContextInjector

    # Roots: where the session works, for MCP servers that ask (filesystem-like servers).
    roots = [config.project_root, *engine.additional_directories]
    ext = Extensions()
    try:
        ext.skills = attach_skills(config, tools, engine, trust=trust)
        ext.warnings.extend(ext.skills.problems)
        ext.mcp, warnings = await attach_mcp(config, tools, roots, context_window, trust=trust)
        ext.warnings.extend(warnings)
        # Opened side by side: while one waits on its SQLite thread the other imports and
        # opens. Their tools are registered afterwards, in a fixed order (stable prompts).
        memory, knowledge = await asyncio.gather(
            attach_memory(config, session_id),
            attach_knowledge(config, engine, watch=interactive),
            return_exceptions=True,
        )
        ext.memory = None if isinstance(memory, BaseException) else memory[0]
        ext.knowledge = None if isinstance(knowledge, BaseException) else knowledge[0]
        # ext.aclose() below closes whichever one did open.
        if isinstance(memory, BaseException):
            raise memory
        if isinstance(knowledge, BaseException):
            raise knowledge
        for tool in [*memory[1], *knowledge[1]]:
            tools.register(tool)
    except BaseException:
        await ext.aclose()
        raise
    budget = int(context_window * config.loaded.settings.context_budget)
    ext.injector = ContextInjector(
        budget_tokens=budget,
        project_root=config.project_root,
        memory=ext.memory,
        knowledge=ext.knowledge,
    )
    return ext
