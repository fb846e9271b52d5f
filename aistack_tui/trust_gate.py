"""The trust gate: what a project's own files may run, grant or redirect before the user agrees.

Anyone can commit a `.mcp.json`, a `.aistack/settings.json` (or `settings.local.json`), the
same files of Claude Code under `.claude/`, or a skill. Whatever in them runs a program
(hooks, MCP servers), widens what the agent may do (`allow` rules, a `defaultMode` of
acceptEdits or bypassPermissions, `additionalDirectories`, turning the sandbox off or
opening its network, a project skill's `allowed-tools`) or redirects a key (providers,
`apiKeys`, `env`, MCP servers reading `${VAR}`) is a `TrustItem`. Items the user has not
agreed to are removed from the settings before anything is built; project `deny` and `ask`
rules, which only narrow, always apply.

The TUI asks once with a dialog listing every item (`RunConfig.trust_prompt`) and remembers
the answer per item content (`settings.trust`). Print mode never asks: it runs without the
project's unagreed items unless `--trust-project` is given (`RunConfig.trust_project`), and
says on stderr what it left out. Hooks are validated here too, so a malformed hook setting is
a configuration error before anything runs.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.settings.claude import (
    claude_local_settings_path,
    claude_project_settings_path,
    claude_user_settings_path,
)
from aistack_tui.settings.layers import (
    ConfigError,
    Layer,
    local_settings_path,
    project_settings_path,
    user_settings_path,
)
from aistack_tui.settings.trust import TrustItem, TrustKind, fingerprint

if TYPE_CHECKING:
    from aistack_tui.agent.hooks import HookGroup
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.session.config import RunConfig

NARROWING_MODES = ("default", "plan")
"""A project may choose these modes untrusted: they only take rights away."""
SAFE_SANDBOX_VALUES: dict[str, tuple[Any, ...]] = {
    "sandbox": ("auto", "bwrap"),
    "sandboxNetwork": (False,),
}
"""Sandbox settings a project may make untrusted: they keep or tighten the sandbox. Any
other value of a `sandbox*` key (turning it off, opening the network, keys this version
does not know) needs trust."""
PERMISSION_KINDS = ("allow", "mode", "directory")


def parse_hook_settings(
    config: RunConfig, *, include_project: bool = True
) -> dict[str, list[HookGroup]]:
    """Validate the `hooks` setting up front: a malformed one is a configuration error.

    With `include_project=False` the project's own settings files are left out (the user
    did not trust the project's hooks).
    """
    if not any(isinstance(layer.data.get("hooks"), dict) for layer in config.loaded.layers):
        return {}  # the usual case: the hook runner's module is not even imported
    from aistack_tui.agent.hooks import HookConfigError, parse_hooks
    from aistack_tui.settings.layers import merge

    raw: dict[str, Any] = {}
    for layer in config.loaded.layers:
        hooks = layer.data.get("hooks")
        if not isinstance(hooks, dict):
            continue
        try:
            parse_hooks(hooks, layer.source)
        except HookConfigError as e:
            raise ConfigError(str(e)) from e
        if include_project or not is_project_layer(config, layer):
            raw = merge(raw, hooks)
    return parse_hooks(raw)


def is_project_layer(config: RunConfig, layer: Layer) -> bool:
    """Whether `layer` was read from the project's own settings files."""
    if layer.path is None:
        return False
    path = layer.path.resolve()
    if path in (user_settings_path(config.home).resolve(),
                claude_user_settings_path(config.env).resolve()):
        return False  # a project at the aistack or Claude home itself: the user's own file
    root = config.project_root
    return path in {
        p.resolve() for p in (
            project_settings_path(root), local_settings_path(root),
            claude_project_settings_path(root), claude_local_settings_path(root),
        )
    }


@dataclass(frozen=True, slots=True)
class TrustDecision:
    """Everything the project asks for, and what of it does not apply this run."""

    items: list[TrustItem] = field(default_factory=list)
    ignored: list[TrustItem] = field(default_factory=list)

    def ignored_names(self, kind: TrustKind) -> set[str]:
        return {item.name for item in self.ignored if item.kind == kind}


def _relative(config: RunConfig, path: Path | str) -> str:
    try:
        return str(Path(path).resolve().relative_to(config.project_root.resolve()))
    except ValueError:
        return str(path)


def _item(kind: TrustKind, name: str, detail: str, value: Any, source: str) -> TrustItem:
    return TrustItem(kind, name, detail, fingerprint(kind, name, value), source)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _mcp_items(servers: Any, source: str) -> list[TrustItem]:
    from aistack_tui.mcp.config import describe_raw

    if not isinstance(servers, dict):
        return []
    return [
        _item("mcp", str(name), describe_raw(raw), raw, source)  # pyright: ignore[reportUnknownArgumentType]
        for name, raw in servers.items()  # pyright: ignore[reportUnknownVariableType]
        if not str(name).startswith("_")  # pyright: ignore[reportUnknownArgumentType]
    ]


def _layer_items(layer: Layer, where: str) -> list[TrustItem]:
    """What one project settings file asks for that needs the user's agreement."""
    data, src = layer.data, layer.source
    items: list[TrustItem] = []
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and hooks:
        events = ", ".join(sorted(str(k) for k in hooks))  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        items.append(_item("hooks", where, f"events: {events}; {json.dumps(hooks)}", hooks, src))
    if "mcpServers" in data:
        items += _mcp_items(data["mcpServers"], src)
    perms = data.get("permissions")
    if isinstance(perms, dict):
        items += [
            _item("allow", rule, where, rule, src)
            for rule in _strings(perms.get("allow"))  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        ]
        mode = perms.get("defaultMode")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if mode is not None and mode not in NARROWING_MODES:
            items.append(_item("mode", str(mode), where, mode, src))  # pyright: ignore[reportUnknownArgumentType]
        items += [
            _item("directory", d, where, d, src)
            for d in _strings(perms.get("additionalDirectories"))  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        ]
    for key, value in data.items():
        if key.startswith("sandbox") and value not in SAFE_SANDBOX_VALUES.get(key, ()):
            shown = f"{key}: {json.dumps(value, default=str)}"
            items.append(_item("sandbox", shown, where, [key, value], src))
    providers = data.get("providers")
    if isinstance(providers, dict):
        for name, entry in providers.items():  # pyright: ignore[reportUnknownVariableType]
            shown = (
                {k: ("(set)" if k == "api_key" else v) for k, v in entry.items()}  # pyright: ignore[reportUnknownVariableType]
                if isinstance(entry, dict) else entry
            )
            detail = f"{json.dumps(shown, default=str)} ({where})"
            items.append(_item("provider", str(name), detail, entry, src))  # pyright: ignore[reportUnknownArgumentType]
    if "env" in data:
        env = data["env"]
        detail = (
            ", ".join(f"{k}={v}" for k, v in env.items())  # pyright: ignore[reportUnknownVariableType]
            if isinstance(env, dict) else json.dumps(env, default=str)
        )
        items.append(_item("env", where, detail, env, src))
    if "apiKeys" in data:
        keys = data["apiKeys"]
        names = ", ".join(sorted(str(k) for k in keys)) if isinstance(keys, dict) else ""  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        items.append(_item("apiKeys", where, f"keys for: {names}", keys, src))
    return items


def _mcp_file_items(config: RunConfig) -> list[TrustItem]:
    """The servers of the project's `.mcp.json` (not used when `--mcp-config` replaces it:
    a file named on the command line is the user's choice)."""
    from aistack_tui.mcp.config import PROJECT_FILE

    if config.mcp_config is not None:
        return []
    path = config.project_root / PROJECT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # absent, or malformed: the MCP loader reports it and starts nothing
    if not isinstance(data, dict):
        return []
    return _mcp_items(data.get("mcpServers"), str(path))  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]


def _skill_items(config: RunConfig) -> list[TrustItem]:
    """Project skills whose `allowed-tools` would be pre-approved when loaded."""
    from aistack_tui.skills.registry import discover, skill_locations

    user_home = Path(config.env.get("HOME", str(Path.home())))
    locations = [
        (label, folder)
        for label, folder in skill_locations(config.project_root, config.home, user_home)
        if label.startswith("project")
    ]
    skills, _problems = discover(locations)
    items: list[TrustItem] = []
    for skill in skills.values():
        if skill.allowed_tools:
            where = _relative(config, skill.path)
            detail = f"allowed-tools: {', '.join(skill.allowed_tools)} ({where})"
            items.append(_item("skill", skill.name, detail, [where, skill.allowed_tools],
                               str(skill.path)))
    return items


def _command_items(config: RunConfig) -> list[TrustItem]:
    """Project slash commands whose `allowed-tools` would be pre-approved when run."""
    from aistack_tui.skills.commands import CommandSet, command_locations

    locations = [
        (label, folder)
        for label, folder in command_locations(config.project_root, config.home)
        if label.startswith("project")
    ]
    items: list[TrustItem] = []
    for command in CommandSet.from_locations(locations).commands.values():
        if command.allowed_tools:
            where = _relative(config, command.path)
            detail = f"allowed-tools: {', '.join(command.allowed_tools)} ({where})"
            items.append(_item("command", command.name, detail,
                               [where, command.allowed_tools], str(command.path)))
    return items


def _agent_items(config: RunConfig) -> list[TrustItem]:
    """Project subagents: each sets a system prompt, tools and a model for the Task tool."""
    from aistack_tui.skills.agents import AgentSet, agent_locations

    locations = [
        (label, folder)
        for label, folder in agent_locations(config.project_root, config.home)
        if label.startswith("project")
    ]
    items: list[TrustItem] = []
    for agent in AgentSet.from_locations(locations).agents.values():
        where = _relative(config, agent.path)
        tools = ", ".join(agent.tools) if agent.tools else "all tools"
        detail = f"tools: {tools}; model: {agent.model or 'inherit'} ({where})"
        items.append(_item("agent", agent.name, detail,
                           [where, agent.tools, agent.model, agent.prompt], str(agent.path)))
    return items


def _identity_items(config: RunConfig) -> list[TrustItem]:
    """The project's identity files (`.aistack/IDENTITY.md`, `SOUL.md`, `USER.md`,
    `memory/MEMORY.md`): they change who the agent is and what it believes of you."""
    from aistack_tui.context.instructions import find_identity_files

    own = find_identity_files(config.home, config.project_root, project=False)
    both = find_identity_files(config.home, config.project_root, project=True)
    mine = {f.path for f in own}
    items: list[TrustItem] = []
    for file in both:
        if file.path in mine:
            continue
        where = _relative(config, file.path)
        items.append(_item("identity", where, f"{len(file.text.encode())} bytes",
                           [where, file.text], str(file.path)))
    return items


def untrusted_command_names(config: RunConfig) -> set[str]:
    """Project slash commands whose current `allowed-tools` the user has not agreed to.

    Asked when the commands are loaded, not from the decision taken at start-up, so a
    command file added or changed since then grants nothing until it is trusted too."""
    from aistack_tui.settings.trust import untrusted

    if config.trust_project:
        return set()
    pending = untrusted(config.home, config.project_root, _command_items(config))
    return {item.name for item in pending}


def project_trust_items(config: RunConfig) -> list[TrustItem]:
    """Everything in the project's files that runs a program, widens rights or redirects
    a key, in the order the trust dialog lists it."""
    items = _mcp_file_items(config)
    for layer in config.loaded.layers:
        if is_project_layer(config, layer):
            items += _layer_items(layer, _relative(config, layer.source))
    items += _skill_items(config)
    items += _command_items(config)
    items += _agent_items(config)
    items += _identity_items(config)
    return items


def decide_without_asking(config: RunConfig) -> TrustDecision:
    """Which of the project's items apply when nobody is asked: all of them when trusted
    (before, or with `--trust-project`); otherwise the ones not agreed to are left out."""
    from aistack_tui.settings.trust import untrusted

    items = project_trust_items(config)
    if not items or config.trust_project:
        return TrustDecision(items)
    return TrustDecision(items, untrusted(config.home, config.project_root, items))


async def decide_project_trust(config: RunConfig) -> TrustDecision:
    """`decide_without_asking`, then the TUI's dialog (`trust_prompt`) for what is left out:
    agreed items are remembered and apply."""
    from aistack_tui.settings.trust import remember

    decision = decide_without_asking(config)
    pending = decision.ignored
    if pending and config.trust_prompt is not None and await config.trust_prompt(pending):
        remember(config.home, config.project_root, pending)
        return TrustDecision(decision.items)
    return decision


def gate_subcommand(config: RunConfig) -> tuple[RunConfig, TrustDecision]:
    """The config a project-run subcommand (`mcp list`, `permissions check|lint`, `doctor`,
    `index`) works from: like print mode it never asks, and leaves out what the user has
    not agreed to. Without this `aistack mcp list` started an untrusted project's servers
    (sending them whatever `${VAR}` named) and `permissions check` applied its allow rules."""
    decision = decide_without_asking(config)
    return apply_trust(config, decision), decision


async def check_project_trust(config: RunConfig) -> bool:
    """Whether everything the project's files ask for may apply (asking the TUI's dialog)."""
    return not (await decide_project_trust(config)).ignored


def _validate_permissions(source: str, perms: dict[str, Any]) -> None:
    """A malformed rule stays fatal even when trust would drop it: a security setting is
    never silently ignored."""
    from aistack_tui.permissions.rules import RuleError, layers_from_settings

    try:
        layers_from_settings([(source, perms)])
    except RuleError as e:
        raise ConfigError(str(e)) from e


def _without(data: dict[str, Any], items: Iterable[TrustItem]) -> dict[str, Any]:
    """A settings layer's data with `items` taken out."""
    out = copy.deepcopy(data)
    items = list(items)
    perms = out.get("permissions")
    touches_perms = any(i.kind in PERMISSION_KINDS for i in items) and isinstance(perms, dict)
    if touches_perms:
        _validate_permissions(str(items[0].source), perms)  # pyright: ignore[reportArgumentType]
    for item in items:
        match item.kind:
            case "hooks" | "env" | "apiKeys":
                out.pop(item.kind, None)
            case "mcp" if isinstance(out.get("mcpServers"), dict):
                out["mcpServers"].pop(item.name, None)
            case "provider" if isinstance(out.get("providers"), dict):
                out["providers"].pop(item.name, None)
            case "sandbox":
                out.pop(item.name.split(":", 1)[0], None)
            case "allow" if isinstance(perms, dict):
                perms["allow"] = [r for r in _strings(perms.get("allow")) if r != item.name]
            case "mode" if isinstance(perms, dict):
                perms.pop("defaultMode", None)
            case "directory" if isinstance(perms, dict):
                dirs = _strings(perms.get("additionalDirectories"))
                perms["additionalDirectories"] = [d for d in dirs if d != item.name]
            case _:
                pass
    if touches_perms and isinstance(perms, dict):
        # The project's self-tests describe its whole configuration; with its grants left
        # out, a test expecting "allow" no longer holds (deny and ask ones still do).
        tests = perms.get("tests")
        if isinstance(tests, list):
            perms["tests"] = [
                t for t in tests  # pyright: ignore[reportUnknownVariableType]
                if not (isinstance(t, dict) and t.get("expect") == "allow")  # pyright: ignore[reportUnknownMemberType]
            ]
    return out


def apply_trust(config: RunConfig, decision: TrustDecision) -> RunConfig:
    """The config without the project items `decision` leaves out (the `.mcp.json` servers
    and skills among them are left out by `wiring`, which starts those), with the settings'
    `env` applied to its environment."""
    if not decision.ignored:
        return with_settings_env(config)
    from aistack_tui.settings.layers import settings_from_layers

    by_source: dict[str, list[TrustItem]] = {}
    for item in decision.ignored:
        by_source.setdefault(item.source, []).append(item)
    layers = [
        dataclasses.replace(layer, data=_without(layer.data, by_source[layer.source]))
        if layer.source in by_source and is_project_layer(config, layer) else layer
        for layer in config.loaded.layers
    ]
    loaded = settings_from_layers(layers)
    mode = config.permission_mode
    if mode == config.loaded.settings.permissions.default_mode:
        mode = loaded.settings.permissions.default_mode  # the mode came from settings
    return with_settings_env(dataclasses.replace(config, loaded=loaded, permission_mode=mode))


def with_settings_env(config: RunConfig) -> RunConfig:
    """The run's environment with the settings' `env` over it, as Claude Code applies its
    `env`: to the session's providers (keys, base URLs), tools and hooks. Applied after
    trust, so a project's `env` counts only once the project is trusted."""
    extra = config.loaded.settings.env
    if not extra or all(config.env.get(k) == v for k, v in extra.items()):
        return config
    return dataclasses.replace(config, env={**config.env, **extra})


def without_untrusted_project_settings(config: RunConfig) -> RunConfig:
    """The config with everything the project's settings files grant left out: what
    applies when the user did not trust any of it."""
    items = [
        item for layer in config.loaded.layers if is_project_layer(config, layer)
        for item in _layer_items(layer, _relative(config, layer.source))
    ]
    return apply_trust(config, TrustDecision(items, items))


def check_model_provider(config: RunConfig, model_string: str, decision: TrustDecision) -> None:
    """A model whose provider only the project defines cannot run while that definition
    is left out: say so, instead of an unknown-provider error. (A built-in provider the
    project only re-points simply keeps its own endpoint.)"""
    from aistack_tui.llm.registry import canonical_name, known_provider_names

    provider = canonical_name(model_string.split("/", 1)[0])
    known = known_provider_names(config.loaded.settings.providers)
    if provider in decision.ignored_names("provider") and provider not in known:
        raise ConfigError(
            f"model {model_string!r} uses provider {provider!r} from this project's settings, "
            "which are not trusted: trust the project in the interactive app or run with "
            "--trust-project"
        )


def trust_saved_rules(engine: PermissionEngine, config: RunConfig) -> None:
    """A rule the user saves from the approval dialog (into `settings.local.json`) is the
    user's own: it is remembered as trusted, so the next run neither asks nor drops it."""
    from aistack_tui.settings.trust import remember

    save = engine.save_rule

    def save_and_trust(rule: str) -> None:
        save(rule)
        remember(config.home, config.project_root, [_item("allow", rule, "", rule, "")])

    engine.save_rule = save_and_trust


def untrusted_notice(items: Iterable[TrustItem]) -> str:
    """The one stderr line saying what of the project's files this run left out."""
    return (
        "aistack: ignored what this project's files ask for (not trusted): "
        f"{ignored_summary(items)}; to apply it, run with --trust-project or trust the "
        "project once in the interactive app"
    )


def ignored_summary(items: Iterable[TrustItem]) -> str:
    """One line naming what was left out, e.g. `MCP server docs, allow rule Bash`."""
    from aistack_tui.settings.trust import item_label

    return ", ".join(item_label(item) for item in items)
