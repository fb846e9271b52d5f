"""`/config`: the settings a user changes by hand, read and written in their own file.

Only the user's settings file (`$AISTACK_HOME/settings.json`) is written, key by key, and
only after the whole file still validates as settings (the same model the loader uses),
so a typo cannot leave a file the next start refuses. Everything else in the file is kept.
Values are JSON (`true`, `0.2`, `"text"`) or a bare word taken as text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aistack_tui.atomic_file import write_atomically
from aistack_tui.json_values import as_object
from aistack_tui.settings.layers import ConfigError, user_settings_path
from aistack_tui.settings.models import Settings

EDITABLE: dict[str, str] = {
    "model": "the model new sessions start with (provider/model)",
    "permissions.defaultMode": "the permission mode new sessions start in",
    "sandbox": "auto, bwrap or off",
    "sandboxNetwork": "open the network for every sandboxed command",
    "checkpoints": "snapshot files before the agent changes them (undo, rewind)",
    "notifications": "auto, bell, osc or off: a turn ended or needs approval",
    "memory": "long-term memory",
    "knowledge": "the code index",
    "contextBudget": "share of the context window for memory and code knowledge",
    "maxTurns": "model turns per prompt",
    "fallbackModel": "the model to switch to when the main one keeps failing",
}


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    key: str
    value: Any
    help: str


def _get(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]  # pyright: ignore[reportUnknownVariableType]
    return node  # pyright: ignore[reportUnknownVariableType]


def current(settings: Settings) -> list[ConfigEntry]:
    """The effective value of every editable key (after every settings layer)."""
    data = settings.model_dump(by_alias=True, mode="json")
    return [ConfigEntry(key, _get(data, key), help) for key, help in EDITABLE.items()]


def parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def set_user_setting(home: Path, key: str, raw: str) -> Any:
    """Write `key` = `raw` into the user's settings file; returns the value written.

    Raises ConfigError (the key is not editable here, or the result does not validate)."""
    if key not in EDITABLE:
        raise ConfigError(f"{key} cannot be set here; /config lists the keys that can")
    path = user_settings_path(home)
    try:
        loaded: object = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path} cannot be read: {e}") from e
    data = as_object(loaded)
    if data is None:
        raise ConfigError(f"{path} is not a JSON object")
    value = parse_value(raw)
    node: dict[str, Any] = data
    *parents, last = key.split(".")
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{path}: {part} is not an object")
        node = child  # pyright: ignore[reportUnknownVariableType]
    node[last] = value
    try:
        Settings.model_validate(data)
    except ValidationError as e:
        problem = e.errors()[0]
        raise ConfigError(f"{key} = {raw}: {problem['msg']}") from e
    _write(path, data)
    return value


def _write(path: Path, data: dict[str, Any]) -> None:
    write_atomically(path, json.dumps(data, indent=2) + "\n")
