"""What `/status` shows: the facts of a running session a user checks first.

Version, model and provider, where the key comes from, the permission mode, which sandbox
commands run in (the same selection the session made), the MCP servers and their state,
every settings file read, and the instruction and identity files in the system prompt with
their sizes. Built from the session's own state, so it says what runs, not what a fresh
start would do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig


@dataclass(frozen=True, slots=True)
class StatusLine:
    label: str
    value: str


def key_source(config: RunConfig, model: str) -> str:
    """Where the provider's key for `model` comes from (its value is never shown)."""
    from aistack_tui.llm.registry import KNOWN_PROVIDERS
    from aistack_tui.session.config import CREDENTIALS_FILE, read_credentials

    provider = model.split("/", 1)[0]
    spec = KNOWN_PROVIDERS.get(provider)
    variables: tuple[str, ...] = tuple(spec.key_env_vars) if spec is not None else ()
    if not variables:
        return "none needed"
    for var in variables:
        if config.env.get(var):
            return f"environment variable {var}"
    if provider in config.loaded.settings.api_keys:
        return "settings (apiKeys)"
    if provider in read_credentials(config.home):
        return f"{config.home / CREDENTIALS_FILE} (saved with /login)"
    return f"none ({' or '.join(variables)})"


def status_lines(
    config: RunConfig,
    *,
    session_id: str,
    model: str,
    mode: str,
    mcp: Sequence[tuple[str, str]],
    untrusted_kinds: set[str],
) -> list[StatusLine]:
    """The lines of `/status` (`mcp`: each server's name and state)."""
    from aistack_tui import __version__
    from aistack_tui.context.instructions import find_identity_files, find_instruction_files

    lines = [
        StatusLine("version", f"aistack {__version__}"),
        StatusLine("session", session_id),
        StatusLine("model", model),
        StatusLine("key", key_source(config, model)),
        StatusLine("mode", mode),
        StatusLine("project", str(config.project_root)),
        StatusLine("sandbox", sandbox_text(config)),
    ]
    for name, state in mcp:
        lines.append(StatusLine("MCP", f"{name}: {state}"))
    for layer in config.loaded.layers:
        lines.append(StatusLine("settings", layer.source + (" (Claude Code)" if layer.claude
                                                            else "")))
    user_home = Path(config.env.get("HOME", str(Path.home())))
    trusted = "identity" not in untrusted_kinds
    files = find_identity_files(config.home, config.project_root, project=trusted)
    files += find_instruction_files(config.project_root, config.cwd, config.home,
                                    user_home=user_home)
    for file in files:
        lines.append(StatusLine(file.kind, f"{file.path} ({len(file.text.encode()):,} bytes)"))
    return lines


def sandbox_text(config: RunConfig) -> str:
    """The sandbox commands run in: bwrap with its version and origin, or unconfined and
    why (the same selection the session made at start)."""
    from aistack_tui.session.sandbox_status import sandbox_status

    settings = config.loaded.settings
    return sandbox_status(settings.sandbox, settings.sandbox_network).text
