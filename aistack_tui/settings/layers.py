"""Load settings from named layers and merge them (later wins; lists concatenate).

Order: built-in defaults → `~/.claude/settings.json` → `$AISTACK_HOME/settings.json` →
`<project>/.claude/settings.json` → `<project>/.aistack/settings.json` →
`<project>/.claude/settings.local.json` → `<project>/.aistack/settings.local.json` →
`AISTACK_*` environment → `--settings` → command-line flags. Claude Code's files sit just
below aistack's own file of the same scope and are translated first (`settings.claude`).
Each layer is validated on its own first, so an error names the file (and line, for
malformed JSON) and the key that is wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aistack_tui.settings.claude import (
    claude_local_settings_path,
    claude_project_settings_path,
    claude_user_settings_path,
    translate_settings,
)
from aistack_tui.settings.models import Settings


class ConfigError(Exception):
    """A configuration mistake; the message is one line saying where and how to fix it."""


@dataclass(frozen=True, slots=True)
class Layer:
    source: str
    data: dict[str, Any]
    path: Path | None = None
    claude: bool = False
    """Read from a Claude Code settings file (`data` is its translation)."""
    ignored: tuple[str, ...] = ()
    """Keys of a Claude Code file that were not carried over, for `aistack doctor`."""


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    settings: Settings
    layers: list[Layer] = field(default_factory=list)

    def permission_layers(self) -> list[tuple[str, dict[str, Any]]]:
        """(source, raw `permissions` dict) of every layer that has one."""
        return [
            (layer.source, layer.data["permissions"])
            for layer in self.layers
            if isinstance(layer.data.get("permissions"), dict)
        ]


ENV_KEYS: dict[str, tuple[str, type]] = {
    "AISTACK_MODEL": ("model", str),
    "AISTACK_MAX_TURNS": ("maxTurns", int),
    "AISTACK_CONTEXT_BUDGET": ("contextBudget", float),
}


def user_settings_path(home: Path) -> Path:
    return home / "settings.json"


def project_settings_path(project_root: Path) -> Path:
    return project_root / ".aistack" / "settings.json"


def local_settings_path(project_root: Path) -> Path:
    return project_root / ".aistack" / "settings.local.json"


def settings_files(
    home: Path, project_root: Path, env: Mapping[str, str]
) -> list[tuple[Path, bool]]:
    """Every settings file, lowest precedence first, each with whether it is Claude
    Code's. A project whose `.claude/` is the user's own Claude directory (a project at
    the home directory) reads that file once, as the user's."""
    user_claude = claude_user_settings_path(env)
    files = [
        (user_claude, True),
        (user_settings_path(home), False),
        (claude_project_settings_path(project_root), True),
        (project_settings_path(project_root), False),
        (claude_local_settings_path(project_root), True),
        (local_settings_path(project_root), False),
    ]
    if claude_project_settings_path(project_root).resolve() == user_claude.resolve():
        del files[2]
    return files


def layer_scope(
    source: str, home: Path, project_root: Path, env: Mapping[str, str]
) -> str:
    """The scope a layer's `source` stands for, as `/permissions` groups rules: `user`,
    `project` or `local` (with ` (Claude Code)` for Claude Code's file of that scope),
    `environment` or `command line` (flags and `--settings`)."""
    scopes = {
        str(claude_local_settings_path(project_root)): "local (Claude Code)",
        str(local_settings_path(project_root)): "local",
        str(claude_project_settings_path(project_root)): "project (Claude Code)",
        str(project_settings_path(project_root)): "project",
        # Last, so a project at the home directory reads `~/.claude` as the user's file,
        # as `settings_files` does.
        str(claude_user_settings_path(env)): "user (Claude Code)",
        str(user_settings_path(home)): "user",
    }
    if source in scopes:
        return scopes[source]
    return "environment" if source.startswith("environment") else "command line"


def read_json_layer(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`, None if absent; ConfigError naming file and line if bad."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read settings: {e}") from e
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"{path}:{e.lineno}:{e.colno}: malformed settings JSON: {e.msg}. "
            "Fix the file or remove it."
        ) from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: settings must be a JSON object, not {type(data).__name__}")
    return data


def merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: dicts merge key by key, lists concatenate, anything else is replaced."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, Mapping):
            out[key] = merge(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            out[key] = old + [v for v in value if v not in old]
        else:
            out[key] = value
    return out


def _validate(data: dict[str, Any], source: str) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise ConfigError(f"{source}: invalid setting {key}: {err['msg']}{more}") from e


def env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for var, (key, kind) in ENV_KEYS.items():
        raw = env.get(var)
        if raw is None or raw == "":
            continue
        try:
            data[key] = kind(raw)
        except ValueError as e:
            raise ConfigError(f"environment {var}={raw!r}: expected {kind.__name__}") from e
    mode = env.get("AISTACK_PERMISSION_MODE")
    if mode:
        data["permissions"] = {"defaultMode": mode}
    return data


def load_settings(
    *,
    home: Path,
    project_root: Path,
    env: Mapping[str, str] | None = None,
    flags: dict[str, Any] | None = None,
    settings_arg: str | None = None,
    cwd: Path | None = None,
    sources: Collection[str] | None = None,
) -> LoadedSettings:
    """Read, validate and merge every layer; raises ConfigError on the first bad one.

    `settings_arg` is `--settings` (a Claude Code settings file, relative to `cwd`, or
    its JSON text): the layer just below the other command-line flags. `sources` is
    Claude Code's `--setting-sources`: only the files of those scopes (`user`, `project`,
    `local`; Claude Code's and aistack's alike) are read; None reads them all.
    """
    env = os.environ if env is None else env
    layers: list[Layer] = []
    files = settings_files(home, project_root, env)
    if sources is not None:
        files = [
            (path, claude) for path, claude in files
            if layer_scope(str(path), home, project_root, env).split(" ")[0] in sources
        ]
    for source_path, claude in files:
        data = read_json_layer(source_path)
        if data is None:
            continue
        if claude:
            translated = translate_settings(data)
            _validate(translated.data, str(source_path))
            layers.append(Layer(str(source_path), translated.data, source_path, True,
                                translated.ignored))
        else:
            _validate(data, str(source_path))
            layers.append(Layer(str(source_path), data, source_path))
    env_data = env_layer(env)
    if env_data:
        _validate(env_data, "environment")
        layers.append(Layer("environment (AISTACK_*)", env_data))
    if settings_arg is not None:
        layers.append(settings_flag_layer(settings_arg, cwd or project_root))
    if flags:
        _validate(flags, "command line")
        layers.append(Layer("command line", flags))
    return settings_from_layers(layers)


def settings_flag_layer(value: str, cwd: Path) -> Layer:
    """`--settings FILE-OR-JSON` as a layer, read with Claude Code's meaning.

    It is Claude Code's flag, so its content is Claude Code's settings shape (translated
    like `.claude/settings.json`); the user typed it, so it needs no project trust.
    """
    text = value.strip()
    if text.startswith("{"):
        source, path = "--settings", None
        try:
            raw: Any = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"--settings: malformed JSON at column {e.colno}: {e.msg}") from e
        if not isinstance(raw, dict):
            raise ConfigError("--settings: settings must be a JSON object")
        data: dict[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    else:
        path = (cwd / text).expanduser()
        source = f"--settings {path}"
        found = read_json_layer(path)
        if found is None:
            raise ConfigError(f"--settings: no settings file {path}")
        data = found
    translated = translate_settings(data)
    _validate(translated.data, source)
    return Layer(source, translated.data, None, True, translated.ignored)


def settings_from_layers(layers: list[Layer]) -> LoadedSettings:
    """Merge already-validated layers (later wins; lists concatenate)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = merge(merged, layer.data)
    return LoadedSettings(_validate(merged, "merged settings"), layers)
