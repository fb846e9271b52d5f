"""The composition root: build the agent, its tools, permissions and stores from settings.

Front ends call `open_session(config, approver)` and get an `AgentSession`; nothing else
in the program wires components together. Heavy imports (provider SDKs, SQLite) happen
here, lazily, never on the `--version` / `--help` path.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.permissions.types import PermissionMode
from aistack_tui.settings.layers import ConfigError, LoadedSettings, load_settings
from aistack_tui.trust_gate import (
    apply_trust,
    check_model_provider,
    decide_project_trust,
    ignored_summary,
    parse_hook_settings,
    trust_saved_rules,
)

if TYPE_CHECKING:
    from aistack_tui.agent.ports import ApprovalHandler
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.checkpoints.manager import CheckpointManager
    from aistack_tui.llm.model_info import ModelInfo
    from aistack_tui.llm.provider import Provider
    from aistack_tui.llm.types import Message
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.sessions.models import SessionInfo
    from aistack_tui.sessions.sqlite_store import SqliteSessionStore
    from aistack_tui.settings.trust import TrustItem
    from aistack_tui.tools.base import ToolContext
    from aistack_tui.wiring import Extensions

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-4.1",
    "google": "gemini-2.5-pro",
}
CREDENTIALS_FILE = "credentials.json"


TrustPrompt = Callable[[list["TrustItem"]], Awaitable[bool]]


class NoProviderError(ConfigError):
    """No provider has a key: the TUI shows its setup screen, print mode exits 2."""


@dataclass
class RunConfig:
    """Everything a front end needs to open a session, resolved from argv and settings."""

    cwd: Path
    project_root: Path
    home: Path
    loaded: LoadedSettings
    model: str | None = None
    permission_mode: PermissionMode = "default"
    max_turns: int | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    resume: str | None = None
    continue_latest: bool = False
    fork_session: bool = False
    no_memory: bool = False
    no_knowledge: bool = False
    mcp_config: Path | None = None
    max_budget_usd: float | None = None
    verbose: bool = False
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    trust_prompt: TrustPrompt | None = None
    """The TUI's "trust what this project's files ask for?" dialog; None (print mode)
    never asks and leaves out what the user has not agreed to before."""
    trust_project: bool = False
    """`--trust-project`: apply everything the project's files ask for, this run only."""


def make_run_config(
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    **options: Any,
) -> RunConfig:
    """Load the settings layers for `cwd` and combine them with command-line options."""
    from aistack_tui.storage.paths import aistack_home, find_project_root

    env = dict(os.environ if env is None else env)
    cwd = (cwd or Path.cwd()).resolve()
    project_root = find_project_root(cwd)
    home = aistack_home(env)
    flags: dict[str, Any] = {}
    if model:
        flags["model"] = model
    if permission_mode:
        flags["permissions"] = {"defaultMode": permission_mode}
    loaded = load_settings(home=home, project_root=project_root, env=env, flags=flags)
    settings = loaded.settings
    config = RunConfig(
        cwd=cwd,
        project_root=project_root,
        home=home,
        loaded=loaded,
        model=settings.model,
        permission_mode=settings.permissions.default_mode,
        max_turns=settings.max_turns,
        system_prompt=settings.system_prompt,
        append_system_prompt=settings.append_system_prompt,
        env=env,
    )
    known = {f.name for f in dataclasses.fields(RunConfig)}
    for key, value in options.items():
        if key not in known:
            raise TypeError(f"unknown option {key}")
        if value is not None:
            setattr(config, key, value)
    return config


def read_credentials(home: Path) -> dict[str, str]:
    """Keys pasted into the setup screen, saved under AISTACK_HOME with mode 0600."""
    path = home / CREDENTIALS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def save_credential(home: Path, provider: str, api_key: str) -> Path:
    path = home / CREDENTIALS_FILE
    data = read_credentials(home)
    data[provider] = api_key
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    os.chmod(path, 0o600)
    return path


def _key_env(config: RunConfig) -> dict[str, str]:
    """The environment plus keys from settings and saved credentials (env wins)."""
    from aistack_tui.llm.registry import KNOWN_PROVIDERS

    env = dict(config.env)
    extra = read_credentials(config.home)
    extra.update({k: v.get_secret_value() for k, v in config.loaded.settings.api_keys.items()})
    for provider, key in extra.items():
        spec = KNOWN_PROVIDERS.get(provider)
        for var in getattr(spec, "key_env_vars", ()) or ():
            env.setdefault(var, key)
            break
    return env


def resolve_model_string(config: RunConfig) -> str:
    """The `provider/model` to use: --model, settings, else the first provider with a key."""
    from aistack_tui.llm.registry import default_provider_from_env

    if config.model:
        return config.model if "/" in config.model else _guess_provider(config.model)
    provider = default_provider_from_env(_key_env(config))
    if provider is None:
        raise NoProviderError(
            "no LLM provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
            "GEMINI_API_KEY (or GOOGLE_API_KEY), or choose a local model with "
            "--model ollama/MODEL"
        )
    return f"{provider}/{DEFAULT_MODELS.get(provider, '')}"


def _guess_provider(model: str) -> str:
    lowered = model.lower()
    if lowered.startswith("claude"):
        return f"anthropic/{model}"
    if lowered.startswith(("gpt", "o1", "o3", "o4")):
        return f"openai/{model}"
    if lowered.startswith("gemini"):
        return f"google/{model}"
    raise ConfigError(f"model {model!r} has no provider: write it as PROVIDER/MODEL")


def build_provider(config: RunConfig, model_string: str) -> tuple[Provider, ModelInfo]:
    """Create the provider adapter (importing only its SDK) and look up the model."""
    from aistack_tui.llm.model_info import lookup_model
    from aistack_tui.llm.registry import (
        UnknownProviderError,
        create_provider,
        parse_model_string,
        resolve_provider_config,
    )

    settings = config.loaded.settings
    try:
        provider_name, model = parse_model_string(model_string)
        custom = {k: v.model_dump(exclude_none=True) for k, v in settings.providers.items()}
        for name, raw in custom.items():
            if "api_key" in raw:
                raw["api_key"] = settings.providers[name].api_key.get_secret_value()  # type: ignore[union-attr]
        pconfig = resolve_provider_config(provider_name, custom, custom, _key_env(config))
    except UnknownProviderError as e:
        raise ConfigError(str(e)) from e
    except ValueError as e:
        raise ConfigError(f"invalid model {model_string!r}: {e}") from e
    if pconfig.needs_key and not pconfig.api_key:
        names = " or ".join(pconfig.key_env_vars) or "an api key in settings"
        raise NoProviderError(f"no API key for {provider_name}: set {names}")
    info = lookup_model(pconfig.name, model, settings.models)
    return create_provider(pconfig, model), info


class ModelRouter:
    """Models for kinds of work (`compaction`, `subagent`, `title`) named in settings,
    built on first use and closed with the session; None means "use the main model".

    A route carries the model's own `ModelInfo`, so work done on a cheap model is priced
    at that model's rates, not the main model's."""

    def __init__(self, config: RunConfig, routes: dict[str, str | None]) -> None:
        self.config = config
        self.routes = {kind: model for kind, model in routes.items() if model}
        self._built: dict[str, tuple[Provider, ModelInfo]] = {}

    def route(self, kind: str) -> tuple[Provider, ModelInfo] | None:
        model = self.routes.get(kind)
        if model is None:
            return None
        if model not in self._built:
            self._built[model] = build_provider(self.config, model)
        return self._built[model]

    async def aclose(self) -> None:
        for provider, _info in self._built.values():
            await provider.aclose()


@dataclass
class PersistingHooks:
    """Appends every completed message to the session store as it happens."""

    session: AgentSession

    async def on_message(self, message: Message) -> None:
        await self.session.store.append(self.session.info.id, message)

    async def on_turn_end(self, turn: int) -> None:
        agent = self.session.agent
        last = agent.messages[-1] if agent.messages else None
        if last is not None and last.role == "assistant" and not last.tool_uses():
            await self.session.extensions.after_turn(
                agent, self.session.info.id, self.session.tool_context
            )
            await self.session.name_once()

    async def on_error(self, error: BaseException) -> None:
        return None


class AgentSession:
    """A live session: the agent plus the stores and engine it was built from."""

    def __init__(
        self,
        *,
        config: RunConfig,
        agent: Agent,
        engine: PermissionEngine,
        store: SqliteSessionStore,
        info: SessionInfo,
        tool_context: ToolContext,
        model_string: str,
        extensions: Extensions,
    ) -> None:
        self.config = config
        self.extensions = extensions
        self.checkpoints: CheckpointManager | None = None
        self.untrusted: list[TrustItem] = []
        """What the project's files ask for that this session left out (not trusted)."""
        self.router: ModelRouter | None = None
        self._titled = bool(agent.messages)  # a resumed session keeps its title
        self.agent = agent
        self.engine = engine
        self.store = store
        self.info = info
        self.tool_context = tool_context
        self.model_string = model_string
        self._recorded_usage = agent.totals.usage
        self._recorded_cost = agent.totals.cost_usd or 0.0

    async def switch_model(self, model_string: str) -> None:
        provider, info = build_provider(self.config, model_string)
        old = self.agent.provider
        self.agent.switch_model(provider, info)
        self.model_string = model_string
        await old.aclose()

    async def resume(self, session_id: str) -> None:
        info = await self.store.get(session_id)
        if info is None:
            raise ConfigError(f"no session {session_id!r} in this project")
        from aistack_tui.agent.compaction import start_from_last_summary

        self.info = info
        self.agent.messages = start_from_last_summary(await self.store.messages(info.id))

    async def name_once(self) -> None:
        """Give the session a short title from the router's `title` model, once."""
        from aistack_tui.llm.errors import ProviderError
        from aistack_tui.llm.model_info import cost_usd
        from aistack_tui.llm.types import LLMRequest, Message

        route = self.router.route("title") if self.router else None
        if route is None or self._titled:
            return
        provider, info = route
        self._titled = True
        first = next((m.text() for m in self.agent.messages if m.role == "user"), "")
        request = LLMRequest(
            system="Write a title of 3 to 6 words for a coding session that starts with the "
            "user's message below. Reply with the title only, no quotes.",
            messages=[Message.user(first[:2000])],
            max_tokens=30,
        )
        try:
            reply = await provider.complete(request)
        except ProviderError:
            return  # the first line of the prompt stays the title
        title = reply.text().strip().strip('"').splitlines()[0][:80] if reply.text().strip() else ""
        if title:
            await self.store.set_title(self.info.id, title)
            if reply.usage is not None:
                self.agent.totals.add(
                    f"{provider.name}/{provider.model}", reply.usage, cost_usd(info, reply.usage)
                )

    async def new_conversation(self) -> None:
        self.info = await self.store.create(self.config.project_root, self.model_string)
        self.agent.messages = []

    async def record_usage(self) -> None:
        """Store the usage and cost added since the last call."""
        from aistack_tui.llm.types import Usage

        totals = self.agent.totals
        u, r = totals.usage, self._recorded_usage
        delta = Usage(
            input_tokens=u.input_tokens - r.input_tokens,
            output_tokens=u.output_tokens - r.output_tokens,
            cache_read_input_tokens=u.cache_read_input_tokens - r.cache_read_input_tokens,
            cache_creation_input_tokens=u.cache_creation_input_tokens
            - r.cache_creation_input_tokens,
        )
        cost = (totals.cost_usd or 0.0) - self._recorded_cost
        self._recorded_usage, self._recorded_cost = u, totals.cost_usd or 0.0
        if delta != Usage():
            await self.store.record_usage(
                self.info.id, delta, cost if totals.cost_usd is not None else None,
                self.model_string,
            )

    async def close(self) -> None:
        try:
            await self.record_usage()
        finally:
            await self.extensions.aclose()
            if self.router is not None:
                await self.router.aclose()
            await self.agent.provider.aclose()
            await self.store.close()


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
    ]
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


async def open_session(
    config: RunConfig, approver: ApprovalHandler, *, interactive: bool = False
) -> AgentSession:
    """Build everything for one session; resumes or continues when the config says so.

    Whatever was opened is closed again if a later step fails, so a configuration error
    never leaves a database thread or a server process behind.
    """
    from aistack_tui.agent.compaction import CompactionSettings
    from aistack_tui.agent.plan_tool import PresentPlanTool
    from aistack_tui.agent.planning import PLAN_MODE_PROMPT
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.agent.stops import RunLimits
    from aistack_tui.agent.subagents import TaskTool
    from aistack_tui.agent.tool_runner import ToolRunner
    from aistack_tui.context.system_prompt import build_system_prompt
    from aistack_tui.llm.retry import RetryPolicy
    from aistack_tui.sessions.sqlite_store import open_session_store
    from aistack_tui.tools.base import ToolContext, ToolRegistry
    from aistack_tui.tools.builtin import builtin_tools
    from aistack_tui.wiring import attach_extensions

    parse_hook_settings(config)  # fail fast on a malformed setting, before asking anything
    trust = await decide_project_trust(config)
    config = apply_trust(config, trust)  # what the user has not agreed to is left out
    model_string = resolve_model_string(config)
    check_model_provider(config, model_string, trust)
    engine = build_permission_engine(config)
    trust_saved_rules(engine, config)
    hooks = parse_hook_settings(config)
    settings = config.loaded.settings
    async with contextlib.AsyncExitStack() as cleanup:
        provider, model_info = build_provider(config, model_string)
        cleanup.push_async_callback(provider.aclose)
        store = await open_session_store(config.home)
        cleanup.push_async_callback(store.close)
        info, history = await _load_or_create(store, config, model_string)
        tool_context = ToolContext(
            project_root=config.project_root,
            cwd=config.cwd,
            home=config.home,
            session_id=info.id,
            additional_directories=list(engine.additional_directories),
        )
        tools = ToolRegistry(builtin_tools())
        runner = ToolRunner(
            tools=tools,
            permissions=engine,
            approver=approver,
            context=tool_context,
            results_dir=config.home / "tool-results" / info.id,
        )
        extensions = await attach_extensions(
            config,
            tools=tools,
            context=tool_context,
            engine=engine,
            session_id=info.id,
            context_window=model_info.context_window,
            interactive=interactive,
            trust=trust,
        )
        cleanup.push_async_callback(extensions.aclose)
        system_prompt = build_system_prompt(
            project_root=config.project_root,
            cwd=config.cwd,
            home=config.home,
            override=config.system_prompt,
            append=config.append_system_prompt,
            skills_catalogue=extensions.skills.catalogue() if extensions.skills else "",
        )
        system_prompt += f"\n\n{PLAN_MODE_PROMPT}"  # phrased for any mode: Shift+Tab may switch
        hook_runner = None
        if hooks:
            from aistack_tui.agent.hooks import HookRunner

            hook_runner = HookRunner(
                hooks, session_id=info.id, cwd=config.cwd, project_root=config.project_root
            )
            runner.pre_tool_hook = hook_runner.pre_tool_use
            runner.post_tool_hook = hook_runner.post_tool_use
            started = await hook_runner.session_start("resume" if history else "startup")
            if started:
                system_prompt += f"\n\n<session_start_context>\n{started}\n</session_start_context>"
        router = ModelRouter(config, settings.router.model_dump())
        agent = Agent(
            hook_runner=hook_runner,
            provider=provider,
            model_info=model_info,
            runner=runner,
            system_prompt=system_prompt,
            history=history,
            retry_policy=RetryPolicy(
                max_retries=settings.retry.max_retries,
                base_delay=settings.retry.base_delay,
                max_delay=settings.retry.max_delay,
                strategy=settings.retry.strategy,
                per_error={str(k): v for k, v in settings.retry.per_error.items()},
            ),
            max_turns=config.max_turns,
            context_injector=extensions.injector,
            compaction=CompactionSettings(
                warn_ratio=settings.compaction.warn_ratio,
                auto_ratio=settings.compaction.auto_ratio,
            ),
            on_compacted=extensions.store_summary_for(info.id),
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
            route_for=router.route,
        )
        cleanup.push_async_callback(router.aclose)
        tools.register(TaskTool(lambda: agent))
        tools.register(PresentPlanTool(lambda: agent, engine))
        if trust.ignored and interactive:
            agent.notify(
                "Started without what this project's files ask for (not trusted): "
                + ignored_summary(trust.ignored)
            )
        for warning in extensions.warnings:
            agent.notify(warning)
        if hook_runner is not None:
            hook_runner.notify = agent.notify
        session = AgentSession(
            config=config,
            agent=agent,
            engine=engine,
            store=store,
            info=info,
            tool_context=tool_context,
            model_string=model_string,
            extensions=extensions,
        )
        session.untrusted = trust.ignored
        agent.hooks = PersistingHooks(session)
        attach_safety(session)
        session.router = router
        cleanup.pop_all()  # success: the session owns everything now
    return session


def attach_safety(session: AgentSession) -> None:
    """Checkpoints before every mutating call, and the Bash sandbox when asked for."""
    from aistack_tui.checkpoints.manager import CheckpointManager
    from aistack_tui.checkpoints.wiring import attach_checkpoints
    from aistack_tui.sandbox import SandboxError, detect_sandbox
    from aistack_tui.sandbox.policy import ExposurePolicy

    config = session.config
    settings = config.loaded.settings
    if settings.sandbox != "off":
        engine = session.engine
        try:
            sandbox, notice = detect_sandbox(
                settings.sandbox,
                settings.sandbox_network,
                project_root=config.project_root,
                writable=list(engine.additional_directories),
            )
        except SandboxError as e:
            raise ConfigError(f"sandbox: {e}") from e
        sandbox.exposure = ExposurePolicy(
            [engine.project_root, *engine.additional_directories],
            engine.home,
            hides=engine.hidden_from_commands,
            freezes=engine.frozen_for_commands,
            rule_roots=engine.denied_roots,
            secret_files=[config.home / CREDENTIALS_FILE],
        )
        if sandbox.confined:
            sandbox.exposure.prefetch()
        session.tool_context.services["sandbox"] = sandbox
        engine.kernel_enforced = sandbox.confined
        if notice and not sandbox.confined:
            # Said once: where no sandbox starts, the parser is the only wall. A working
            # sandbox is the normal case and needs no line of its own.
            session.agent.notify(notice, "warning")
    if settings.checkpoints:
        session.checkpoints = CheckpointManager(config.home, config.project_root)
        attach_checkpoints(session, session.checkpoints)


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
    if source is None:
        return await store.create(config.project_root, model_string), []
    if config.fork_session:
        source = await store.fork(source.id)
    from aistack_tui.agent.compaction import start_from_last_summary

    return source, start_from_last_summary(await store.messages(source.id))
