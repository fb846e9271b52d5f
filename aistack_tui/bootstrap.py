"""The composition root: build the agent, its tools, permissions and stores from settings.

Front ends call `open_session(config, approver)` and get a `LiveSession` (the facade in
`session/live.py`); nothing else in the program wires components together. This module
only composes: run configuration lives in `session/config.py`, model resolution in
`session/providers.py`, session behaviour in `session/live.py`. Heavy imports (provider
SDKs, SQLite) happen here, lazily, never on the `--version` / `--help` path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.checkpoints.wiring import snapshot_before_mutation
from aistack_tui.session.config import CREDENTIALS_FILE, RunConfig
from aistack_tui.session.conversation import Conversation
from aistack_tui.session.live import LiveSession
from aistack_tui.session.models import ModelControl
from aistack_tui.session.permission_views import PermissionViews
from aistack_tui.session.providers import (
    ModelRouter,
    build_provider,
    resolve_model_string,
    start_catalogue_refresh,
)
from aistack_tui.session.recorder import AfterAnswer, CurrentSession, SessionRecorder
from aistack_tui.session.titles import Titler
from aistack_tui.session.turns import TurnControl
from aistack_tui.session.workspace import Workspace
from aistack_tui.settings.layers import ConfigError
from aistack_tui.tools.base import ToolRegistry
from aistack_tui.trust_gate import (
    TrustDecision,
    apply_trust,
    check_model_provider,
    decide_project_trust,
    ignored_summary,
    parse_hook_settings,
    trust_saved_rules,
)
from aistack_tui.wiring import Extensions, attach_extensions

if TYPE_CHECKING:
    from aistack_tui.agent.hooks import HookGroup, HookRunner
    from aistack_tui.agent.ports import ApprovalHandler, LifecycleHooks
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.llm.model_info import ModelInfo
    from aistack_tui.llm.provider import Provider
    from aistack_tui.llm.types import Message, Usage
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.sandbox.base import Sandbox
    from aistack_tui.sessions.models import SessionInfo
    from aistack_tui.sessions.sqlite_store import SqliteSessionStore


def build_permission_engine(config: RunConfig) -> PermissionEngine:
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.permissions.rules import RuleError, layers_from_settings
    from aistack_tui.permissions.rules import split_rule_list as split
    from aistack_tui.settings.layers import local_settings_path

    raw_layers = config.loaded.permission_layers()
    if config.allowed_tools:
        raw_layers.append(("--allowed-tools flag", {"allow": split(config.allowed_tools)}))
    if config.disallowed_tools:
        raw_layers.append(("--disallowed-tools flag", {"deny": split(config.disallowed_tools)}))
    try:
        layers = layers_from_settings(raw_layers)
    except RuleError as e:
        raise ConfigError(str(e)) from e
    settings = config.loaded.settings
    extra_dirs = [
        Path(d).expanduser() if Path(d).expanduser().is_absolute()
        else config.project_root / d
        for d in settings.permissions.additional_directories
    ] + [Path(d).expanduser().resolve() for d in config.add_dirs]
    try:
        return PermissionEngine(
            layers=layers,
            mode=config.permission_mode,
            project_root=config.project_root,
            home=Path(config.env.get("HOME", str(Path.home()))),
            additional_directories=extra_dirs,
            extra_read_dirs=[config.home / "tool-results"],
            cwd=config.cwd,
            local_settings_path=local_settings_path(config.project_root),
        )
    except RuleError as e:
        raise ConfigError(str(e)) from e


MCP_TOOL_NAMES = ("mcp__", "McpToolSearch")
"""`--tools` chooses among the built-in tools; MCP tools (and the search that loads
them) are offered whatever it lists, as in Claude Code."""


def offered_tools(config: RunConfig, engine: PermissionEngine) -> Callable[[str], bool]:
    """Which tools the model is offered: Claude Code leaves out of its context the
    built-in tools `--tools` does not list, and every tool a bare deny rule refuses
    outright (`Write`, `mcp__docs`), since each call would only be denied."""
    from aistack_tui.permissions.rules import parse_rule, rule_covers_tool

    denied = [parse_rule(text, layer.source) for layer in engine.layers for text in layer.deny]
    bare = [rule for rule in denied if rule.kind in ("tool", "mcp")]
    base = None if config.base_tools is None else set(config.base_tools)
    known: dict[str, bool] = {}

    def offered(name: str) -> bool:
        if name not in known:
            listed = base is None or name in base or name.startswith(MCP_TOOL_NAMES)
            known[name] = listed and not any(rule_covers_tool(r, name) for r in bare)
        return known[name]

    return offered


async def open_session(
    config: RunConfig, approver: ApprovalHandler, *, interactive: bool = False
) -> LiveSession:
    """Build everything for one session; resumes or continues when the config says so.

    Each part is built whole, in dependency order, and handed what it needs when it is
    made: nothing is hung on an object after it exists. Whatever was opened is closed
    again if a later step fails, so a configuration error never leaves a database thread
    or a server process behind.
    """
    parse_hook_settings(config)  # fail fast on a malformed setting, before asking anything
    trust = await decide_project_trust(config)
    config = apply_trust(config, trust)  # what the user has not agreed to is left out
    model_string = resolve_model_string(config)
    check_model_provider(config, model_string, trust)
    engine = build_permission_engine(config)
    trust_saved_rules(engine, config)
    # Heavy: SQLite and every tool module, imported only when a session opens.
    from aistack_tui.sessions.sqlite_store import open_session_store
    from aistack_tui.tools.builtin import builtin_tools

    async with contextlib.AsyncExitStack() as cleanup:
        provider, model_info = build_provider(config, model_string)
        cleanup.push_async_callback(provider.aclose)
        store = await open_session_store(config.home)
        cleanup.push_async_callback(store.close)
        info, history = await _load_or_create(store, config, model_string)
        tools = ToolRegistry(builtin_tools(), offered_tools(config, engine))
        extensions = await attach_extensions(
            config,
            tools=tools,
            engine=engine,
            session_id=info.id,
            context_window=model_info.context_window,
            interactive=interactive,
            trust=trust,
        )
        cleanup.push_async_callback(extensions.aclose)
        sandbox, sandbox_notice = build_sandbox(config, engine)
        router = ModelRouter(config, config.loaded.settings.router.model_dump())
        cleanup.push_async_callback(router.aclose)
        parts = SessionParts(
            config=config, model_string=model_string, engine=engine, store=store,
            current=CurrentSession(info), history=history, extensions=extensions,
            tools=tools, sandbox=sandbox, router=router, trust=trust,
        )
        agent = await build_agent(parts, provider, model_info, approver)
        for text, level in _opening_notices(parts, sandbox_notice, interactive=interactive):
            parts.notices.notify(text, level)
        extensions.show_mcp_logs(agent.notify, config.verbose)
        session = build_facade(parts, agent, model_string)
        warn_if_deprecated(session)
        start_catalogue_refresh(config, model_string)
        cleanup.pop_all()  # success: the session owns everything now
    return session


class SessionParts:
    """The parts of one session that do not depend on the agent, made in dependency
    order by `__init__`; `build_agent` then makes the agent from them. Parts that need
    the agent itself (the Task tool, the hooks' view of the conversation) are given a
    way to reach it once it exists (`self.agent`)."""

    def __init__(
        self,
        *,
        config: RunConfig,
        model_string: str,
        engine: PermissionEngine,
        store: SqliteSessionStore,
        current: CurrentSession,
        history: list[Message],
        extensions: Extensions,
        tools: ToolRegistry,
        sandbox: Sandbox | None,
        router: ModelRouter,
        trust: TrustDecision,
    ) -> None:
        from aistack_tui.agent.notices import Notices
        from aistack_tui.checkpoints.manager import CheckpointManager
        from aistack_tui.subagent_types import load_subagents
        from aistack_tui.tools.base import ToolContext
        from aistack_tui.tools.services import ToolServices

        self.config, self.engine, self.store, self.current = config, engine, store, current
        self.history, self.extensions, self.tools, self.trust = history, extensions, tools, trust
        self.router, self.sandbox = router, sandbox
        self.agent: Agent | None = None
        settings = config.loaded.settings
        self.notices = Notices()
        self.checkpoints = (
            CheckpointManager(config.home, config.project_root) if settings.checkpoints else None
        )
        self.tool_context = ToolContext(
            project_root=config.project_root,
            cwd=config.cwd,
            home=config.home,
            session_id=current.id,
            additional_directories=list(engine.additional_directories),
            env=dict(settings.env),
            services=ToolServices.checked_by(
                engine,
                sandbox=sandbox,
                memory=extensions.memory,
                skills=extensions.skills,
                knowledge=extensions.knowledge,
                tool_registry=tools,
            ),
        )
        self.hook_runner = make_hook_runner(
            config, parse_hook_settings(config), current.id, engine,
            notify=self.notices.notify, messages=self.messages,
        )
        self.subagents = load_subagents(
            config, trust.ignored_names("agent"), model_string, router.model
        )
        self.titler = Titler(router, store, lambda: current.id, titled=bool(history))

    def messages(self) -> list[Message]:
        """The conversation: the agent's once it exists, the loaded history before."""
        return self.agent.messages if self.agent is not None else self.history

    def the_agent(self) -> Agent:
        assert self.agent is not None, "the agent is asked for before it was built"
        return self.agent


async def build_agent(
    parts: SessionParts, provider: Provider, model_info: ModelInfo, approver: ApprovalHandler
) -> Agent:
    """The agent and its tool runner, with its hooks, checkpoints and listeners."""
    from aistack_tui.agent.compaction import CompactionSettings
    from aistack_tui.agent.plan_tool import PresentPlanTool
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.agent.stops import RunLimits
    from aistack_tui.agent.subagents import TaskTool
    from aistack_tui.agent.tool_runner import ToolRunner
    from aistack_tui.llm.retry import RetryPolicy
    from aistack_tui.tools.websearch import WebSearchTool

    config, engine, settings = parts.config, parts.engine, parts.config.loaded.settings
    hook_runner, checkpoints, current = parts.hook_runner, parts.checkpoints, parts.current
    notify = parts.notices.notify
    system_prompt = await _system_prompt(parts)
    runner = ToolRunner(
        tools=parts.tools,
        permissions=engine,
        approver=approver,
        context=parts.tool_context,
        results_dir=config.home / "tool-results" / current.id,
        pre_tool_hook=hook_runner.pre_tool_use,
        post_tool_hook=hook_runner.post_tool_use,
        notification_hook=hook_runner.notification,
        before_mutation=(
            snapshot_before_mutation(checkpoints, parts.messages, notify, lambda: current.id)
            if checkpoints is not None and not checkpoints.disabled_reason
            else None
        ),
    )
    agent = Agent(
        hook_runner=hook_runner,
        provider=provider,
        model_info=model_info,
        runner=runner,
        system_prompt=system_prompt,
        history=parts.history,
        listeners=_listeners(parts),
        notices=parts.notices,
        retry_policy=RetryPolicy(
            max_retries=settings.retry.max_retries,
            base_delay=settings.retry.base_delay,
            max_delay=settings.retry.max_delay,
            strategy=settings.retry.strategy,
            per_error={str(k): v for k, v in settings.retry.per_error.items()},
        ),
        max_turns=config.max_turns,
        context_injector=parts.extensions.injector,
        compaction=CompactionSettings(
            warn_ratio=settings.compaction.warn_ratio,
            auto_ratio=settings.compaction.auto_ratio,
        ),
        on_compacted=parts.extensions.store_summary_for(current.id),
        limits=RunLimits(
            max_tokens=settings.limits.max_tokens,
            max_cost_usd=config.max_budget_usd or settings.limits.max_budget_usd,
            max_wall_seconds=settings.limits.max_wall_seconds,
            max_consecutive_tool_failures=settings.limits.max_consecutive_tool_failures,
        ),
        fallback=(
            (lambda: build_provider(config, settings.fallback_model or ""))
            if settings.fallback_model
            else None
        ),
        breaker_threshold=settings.retry.breaker_threshold,
        route_for=parts.router.route,
    )
    parts.agent = agent
    subagents = parts.subagents
    parts.tools.register(TaskTool(parts.the_agent, lambda: subagents.types))
    parts.tools.register(WebSearchTool(lambda: agent.provider, search_usage(parts.the_agent)))
    parts.tools.register(PresentPlanTool(parts.the_agent, engine))
    return agent


def build_facade(parts: SessionParts, agent: Agent, model_string: str) -> LiveSession:
    """The session's parts by responsibility, behind the facade front ends hold."""
    config, engine, tool_context = parts.config, parts.engine, parts.tool_context
    current = parts.current
    models = ModelControl(agent=agent, config=config, model_string=model_string)
    conversation = Conversation(
        agent=agent, store=parts.store, config=config, current=current,
        tool_context=tool_context, model=lambda: models.model,
        checkpoints=parts.checkpoints,
    )
    return LiveSession(
        config=config,
        agent=agent,
        engine=engine,
        store=parts.store,
        tool_context=tool_context,
        extensions=parts.extensions,
        turns=TurnControl(
            agent=agent, engine=engine, config=config, tool_context=tool_context,
            record_usage=conversation.record_usage,
        ),
        models=models,
        conversation=conversation,
        permissions=PermissionViews(
            agent=agent, engine=engine, config=config, untrusted=parts.trust.ignored
        ),
        workspace=Workspace(
            agent=agent, engine=engine, config=config, tool_context=tool_context,
            extensions=parts.extensions, subagents=parts.subagents,
            session_id=lambda: current.id, sandbox=parts.sandbox,
        ),
        router=parts.router,
        sandbox=parts.sandbox,
    )


def _listeners(parts: SessionParts) -> list[LifecycleHooks]:
    """Who hears of each message and turn, in order: the store first (what is said is
    kept before anything else can fail), then checkpoints, then the after-answer work."""
    from aistack_tui.checkpoints.wiring import CheckpointRecorder

    current = parts.current
    listeners: list[LifecycleHooks] = [SessionRecorder(parts.store, current)]
    checkpoints = parts.checkpoints
    if checkpoints is not None and not checkpoints.disabled_reason:
        listeners.append(
            CheckpointRecorder(checkpoints, parts.notices.notify, lambda: current.id)
        )
    listeners.append(
        AfterAnswer(parts.the_agent, parts.extensions, parts.titler, current, parts.tool_context)
    )
    return listeners


async def _system_prompt(parts: SessionParts) -> str:
    """The system prompt: instructions, skills, plan mode, and what SessionStart hooks
    add for this start."""
    from aistack_tui.agent.planning import PLAN_MODE_PROMPT
    from aistack_tui.context.system_prompt import build_system_prompt

    config, extensions = parts.config, parts.extensions
    prompt = build_system_prompt(
        project_root=config.project_root,
        cwd=config.cwd,
        home=config.home,
        override=config.system_prompt,
        append=config.append_system_prompt,
        skills_catalogue=extensions.skills.catalogue() if extensions.skills else "",
        warnings=extensions.warnings,
        user_home=Path(config.env.get("HOME", str(Path.home()))),
        project_identity=not parts.trust.ignored_names("identity"),
    )
    prompt += f"\n\n{PLAN_MODE_PROMPT}"  # phrased for any mode: Shift+Tab may switch
    if parts.hook_runner.active():
        started = await parts.hook_runner.session_start("resume" if parts.history else "startup")
        if started:
            prompt += f"\n\n<session_start_context>\n{started}\n</session_start_context>"
    return prompt


def _opening_notices(
    parts: SessionParts, sandbox_notice: str | None, *, interactive: bool
) -> list[tuple[str, str]]:
    """What the user is told as the session opens, in this order: subagents that could
    not load, what was left out as untrusted, extensions' warnings, a sandbox that did
    not start, checkpoints that are off for this directory."""
    notices: list[tuple[str, str]] = []
    if interactive:
        notices += [
            (f"subagent: {problem}", "warning")
            for problem in parts.subagents.problems
            if "not trusted" not in problem  # the trust notice says that once
        ]
        if parts.trust.ignored:
            notices.append((
                "Started without what this project's files ask for (not trusted): "
                + ignored_summary(parts.trust.ignored), "warning",
            ))
    notices += [(warning, "warning") for warning in parts.extensions.warnings]
    if sandbox_notice:
        notices.append((sandbox_notice, "warning"))
    if parts.checkpoints is not None and parts.checkpoints.disabled_reason:
        notices.append((parts.checkpoints.disabled_reason, "info"))
    return notices


def search_usage(agent: Callable[[], Agent]) -> Callable[[Usage], None]:
    """WebSearch's extra model call counted in the session's usage and cost, under the
    model that made it (the provider's per-search fee is not in the price tables)."""
    from aistack_tui.llm.model_info import cost_usd

    def add(usage: Usage) -> None:
        current = agent()
        model = f"{current.provider.name}/{current.provider.model}"
        current.totals.add(model, usage, cost_usd(current.model_info, usage))

    return add


def make_hook_runner(
    config: RunConfig,
    hooks: dict[str, list[HookGroup]],
    session_id: str,
    engine: PermissionEngine,
    *,
    notify: Callable[[str], None],
    messages: Callable[[], Sequence[Message]],
) -> HookRunner:
    """The session's hook runner, made even when no hook is configured: a client program
    may join its own later (`join_client_hooks`), and a runner without hooks runs none."""
    from aistack_tui.agent.hooks import HookRunner

    return HookRunner(
        hooks, session_id=session_id, cwd=config.cwd, project_root=config.project_root,
        env=config.loaded.settings.env,
        transcript_path=config.home / "transcripts" / f"{session_id}.jsonl",
        notify=notify, messages=messages, permission_mode=lambda: engine.mode,
    )


def join_client_hooks(
    session: LiveSession,
    raw: object,
    call_back: Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]],
) -> None:
    """A client program's hooks (the Agent SDK's `hooks=`, which arrive with its
    `initialize` request after the session opened) join the session's hooks.
    HookConfigError says what cannot run."""
    from aistack_tui.agent.hooks import parse_callback_hooks

    groups = parse_callback_hooks(raw)
    if groups:
        session.join_hooks(groups, call_back)


def warn_if_deprecated(session: LiveSession) -> None:
    """One warning when the model is deprecated or retired: the date and what to use."""
    from aistack_tui.llm.catalogue import deprecation_warning

    try:
        warning = deprecation_warning(session.model, home=session.config.home)
    except Exception:  # local data only, but a catalogue bug must never stop a session
        return
    if warning:
        session.notify(f"{warning} (/model to switch)", "warning")


def build_sandbox(config: RunConfig, engine: PermissionEngine) -> tuple[Sandbox | None, str]:
    """The Bash sandbox when the settings ask for one, with the engine's rules turned
    into what each command may see, and the notice to show when none could start."""
    from aistack_tui.sandbox import SandboxError, detect_sandbox
    from aistack_tui.sandbox.policy import ExposurePolicy

    settings = config.loaded.settings
    if settings.sandbox == "off":
        return None, ""
    exposure = ExposurePolicy(
        [engine.project_root, *engine.additional_directories],
        engine.home,
        hides=engine.hidden_from_commands,
        freezes=engine.frozen_for_commands,
        rule_roots=engine.denied_roots,
        secret_files=[config.home / CREDENTIALS_FILE],
        aistack_home=config.home,
    )
    try:
        sandbox, notice = detect_sandbox(
            settings.sandbox,
            settings.sandbox_network,
            project_root=config.project_root,
            writable=list(engine.additional_directories),
            exposure=exposure,
        )
    except SandboxError as e:
        raise ConfigError(f"sandbox: {e}") from e
    if sandbox.confined:
        exposure.prefetch()
    engine.kernel_enforced = sandbox.confined
    # Said once: where no sandbox starts, the parser is the only wall. A working sandbox
    # is the normal case and needs no line of its own.
    return sandbox, "" if sandbox.confined else notice


async def _load_or_create(
    store: SqliteSessionStore, config: RunConfig, model_string: str
) -> tuple[SessionInfo, list[Message]]:
    from aistack_tui.sessions.models import SessionError

    source: SessionInfo | None = None
    if config.resume:
        try:
            source = await store.get(config.resume)
        except SessionError as e:
            raise ConfigError(str(e)) from e
        if source is None:
            raise ConfigError(
                f"no session {config.resume!r}: list them with `aistack sessions`"
            )
    elif config.continue_latest:
        source = await store.latest(config.project_root)
    if config.session_id and await store.get(config.session_id) is not None:
        raise ConfigError(f"--session-id {config.session_id} is already in use")
    if source is None:
        return await store.create(config.project_root, model_string,
                                  session_id=config.session_id), []
    if config.fork_session:
        source = await store.fork(source.id, config.session_id)
    from aistack_tui.agent.compaction import start_from_last_summary

    return source, start_from_last_summary(await store.messages(source.id))
