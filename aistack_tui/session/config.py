"""What a front end needs to open a session: `RunConfig`, resolved from argv and settings,
the API keys saved from the setup screen, and the Shift+Tab cycle of permission modes
that the command line shapes (bypassPermissions only when it was asked for there).

Kept below the live session and the composition root so that extensions (MCP, skills,
trust, checkpoints) can read the run configuration without importing anything above them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.settings.layers import ConfigError, LoadedSettings, load_settings

if TYPE_CHECKING:
    from aistack_tui.permissions.types import PermissionMode
    from aistack_tui.settings.trust import TrustItem

CREDENTIALS_FILE = "credentials.json"
KEY_PROVIDERS: tuple[tuple[str, str, str], ...] = (
    ("anthropic", "Anthropic (Claude)", "ANTHROPIC_API_KEY"),
    ("openai", "OpenAI", "OPENAI_API_KEY"),
    ("google", "Google Gemini", "GEMINI_API_KEY"),
    ("deepseek", "DeepSeek", "DEEPSEEK_API_KEY"),
    ("openrouter", "OpenRouter", "OPENROUTER_API_KEY"),
)
"""Providers a first run can set up with a pasted key: (name, label, key variable)."""

TrustPrompt = Callable[[list["TrustItem"]], Awaitable[bool]]
McpRelay = Callable[[str, dict[str, Any]], Awaitable["dict[str, Any] | None"]]
"""(server name, JSON-RPC message) → the response: mcp/sdk_transport.py's relay, named
here too because the run configuration sits below the MCP package."""


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
    allowed_tools: list[str] = field(default_factory=list[str])
    disallowed_tools: list[str] = field(default_factory=list[str])
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
    add_dirs: list[str] = field(default_factory=list[str])
    """`--add-dir`: more directories the tools may reach, this run only."""
    session_id: str | None = None
    """`--session-id`: the id a client chose for the new session (Claude Code's flag)."""
    base_tools: list[str] | None = None
    """`--tools`: the built-in tools the model is offered (None: all of them). MCP tools
    are offered either way, as in Claude Code."""
    thinking_budget: int | None = None
    """`--max-thinking-tokens`: extended thinking with this budget (Anthropic models)."""
    mcp_relay: McpRelay | None = None
    """How `"type": "sdk"` MCP servers are reached: through the client program driving
    the session (print mode's control protocol sets it); None fails them with a reason."""
    client_mcp_servers: dict[str, Any] = field(default_factory=dict[str, Any])
    """MCP servers the client driving the session supplied (an editor's `mcpServers`),
    as `.mcp.json` entries by name: validated like that file, started with no trust
    question (the user configured them in their editor)."""


def make_run_config(
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    settings_arg: str | None = None,
    setting_sources: Sequence[str] | None = None,
    fallback_model: str | None = None,
    **options: Any,
) -> RunConfig:
    """Load the settings layers for `cwd` and combine them with command-line options.

    `settings_arg` is `--settings` (a Claude Code settings file or its JSON text);
    `setting_sources` is `--setting-sources` (which of the user, project and local
    settings files are read; None: all)."""
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
    if fallback_model:
        flags["fallbackModel"] = fallback_model
    loaded = load_settings(home=home, project_root=project_root, env=env, flags=flags,
                           settings_arg=settings_arg, cwd=cwd, sources=setting_sources)
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
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    items: dict[Any, Any] = data  # pyright: ignore[reportUnknownVariableType]
    return {k: v for k, v in items.items() if isinstance(k, str) and isinstance(v, str)}


def save_credential(home: Path, provider: str, api_key: str) -> Path:
    """Store a key for `provider`; only the owner may read the file."""
    path = home / CREDENTIALS_FILE
    data = read_credentials(home)
    data[provider] = api_key
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    os.chmod(path, 0o600)
    return path


def key_env(config: RunConfig) -> dict[str, str]:
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


# --- the Shift+Tab cycle ------------------------------------------------------------------

MODE_CYCLE: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan")
MODE_CYCLE_WITH_BYPASS: tuple[PermissionMode, ...] = (
    "default", "acceptEdits", "bypassPermissions", "plan"
)
"""bypassPermissions sits between acceptEdits and plan, so plan → default never passes
through it."""


def bypass_on_command_line(config: RunConfig) -> bool:
    """Was bypassPermissions asked for on the command line (`--permission-mode
    bypassPermissions`, `--dangerously-skip-permissions`), not by a settings file? Only
    then do the front ends put it in their Shift+Tab cycle, as Claude Code does."""
    for source, permissions in config.loaded.permission_layers():
        if source == "command line" and permissions.get("defaultMode") == "bypassPermissions":
            return True
    return False


MODE_NAMES: dict[str, PermissionMode] = {
    "default": "default",
    "acceptedits": "acceptEdits",
    "accept": "acceptEdits",
    "edits": "acceptEdits",
    "plan": "plan",
    "bypasspermissions": "bypassPermissions",
    "bypass": "bypassPermissions",
}
"""What `/mode` accepts in the TUI and the line mode (case does not matter)."""


def next_permission_mode(mode: str, *, bypass_offered: bool) -> PermissionMode:
    """The mode Shift+Tab switches to from `mode` (from a mode not in the cycle, such as
    bypassPermissions entered with `/mode`: back to default)."""
    cycle = MODE_CYCLE_WITH_BYPASS if bypass_offered else MODE_CYCLE
    if mode not in cycle:
        return cycle[0]
    return cycle[(cycle.index(mode) + 1) % len(cycle)]
