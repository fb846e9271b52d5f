"""The trust gate: what a project's own files may run or redirect before the user agrees.

Project MCP servers, project hooks and project settings that change provider base URLs, key
variables or `env` take effect in the TUI only after its one-time trust dialog
(`RunConfig.trust_prompt`); print mode trusts the directory it was started in. Hooks are
validated here too, so a malformed hook setting is a configuration error before anything runs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aistack_tui.settings.layers import ConfigError

if TYPE_CHECKING:
    from aistack_tui.agent.hooks import HookGroup
    from aistack_tui.bootstrap import RunConfig


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
        if include_project or not _is_project_layer(config, layer.path):
            raw = merge(raw, hooks)
    return parse_hooks(raw)


def _is_project_layer(config: RunConfig, path: Path | None) -> bool:
    return path is not None and path.resolve().is_relative_to(config.project_root.resolve())


UNTRUSTED_PROVIDER_KEYS = ("base_url", "api_key_env", "api_key")


def _project_redirects(data: dict[str, Any]) -> dict[str, Any]:
    """The parts of a project settings layer that could redirect traffic or keys."""
    found: dict[str, Any] = {}
    providers = data.get("providers")
    if isinstance(providers, dict):
        for name, entry in providers.items():
            if isinstance(entry, dict):
                risky = {k: entry[k] for k in UNTRUSTED_PROVIDER_KEYS if k in entry}
                if risky:
                    found[f"providers.{name}"] = risky
    if "env" in data:
        found["env"] = data["env"]
    return found


def without_untrusted_project_settings(config: RunConfig) -> RunConfig:
    """The config with the project's hooks, provider base URLs / key variables and env
    removed: what applies when the user did not trust the project."""
    from aistack_tui.settings.layers import Layer, settings_from_layers

    layers = []
    for layer in config.loaded.layers:
        if not _is_project_layer(config, layer.path):
            layers.append(layer)
            continue
        data = {k: v for k, v in layer.data.items() if k not in ("hooks", "env")}
        providers = data.get("providers")
        if isinstance(providers, dict):
            data["providers"] = {
                name: {k: v for k, v in entry.items() if k not in UNTRUSTED_PROVIDER_KEYS}
                if isinstance(entry, dict) else entry
                for name, entry in providers.items()
            }
        layers.append(Layer(layer.source, data, layer.path))
    return dataclasses.replace(config, loaded=settings_from_layers(layers))


async def check_project_trust(config: RunConfig) -> bool:
    """Whether the project's MCP servers and hooks may run (asking the TUI's dialog once)."""
    if config.trust_prompt is None:
        return True  # print mode: nothing to ask, so nothing to import either
    from aistack_tui.mcp.config import load_mcp_config
    from aistack_tui.settings.trust import TrustItem, hooks_fingerprint, remember, untrusted

    items: list[TrustItem] = []
    servers, _warnings = load_mcp_config(config.project_root, config.mcp_config, {}, config.env)
    for name, server in servers.items():
        if server.scope == "project":
            items.append(TrustItem("mcp", name, server.describe(), server.fingerprint))
    for layer in config.loaded.layers:
        if not _is_project_layer(config, layer.path):
            continue
        hooks = layer.data.get("hooks")
        if isinstance(hooks, dict) and hooks:
            detail = ", ".join(sorted(hooks))
            items.append(TrustItem("hooks", layer.source, detail, hooks_fingerprint(hooks)))
        redirects = _project_redirects(layer.data)
        if redirects:
            detail = "; ".join(f"{k}: {v}" for k, v in redirects.items())
            items.append(
                TrustItem("settings", layer.source, detail, hooks_fingerprint(redirects))
            )
    pending = untrusted(config.home, config.project_root, items)
    if not pending:
        return True
    if await config.trust_prompt(pending):
        remember(config.home, config.project_root, pending)
        return True
    return False
