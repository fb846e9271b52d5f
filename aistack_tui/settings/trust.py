"""Which parts of a project's settings the user has agreed to.

Anyone can commit a `.mcp.json`, a `.aistack/settings.json` or a skill, so whatever in
them runs a program, widens what the agent may do or redirects a key (see
`trust_gate.project_trust_items`) waits for the user's agreement. The agreement is stored
per project under `$AISTACK_HOME/trusted-projects.json` as one fingerprint per item, taken
over the item's content: a later change to an MCP server, a hook or an allow rule is a new
fingerprint, so it is asked about again while unchanged items stay trusted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from aistack_tui.atomic_file import write_atomically

TRUST_FILE = "trusted-projects.json"

TrustKind: TypeAlias = Literal[
    "mcp", "hooks", "allow", "mode", "directory", "sandbox", "provider", "env", "apiKeys",
    "skill", "command", "agent", "identity",
]


@dataclass(frozen=True, slots=True)
class TrustItem:
    """One thing a project file asks for.

    `name` identifies it within its kind (a server, a rule, a key), `detail` is what the
    user is shown, `source` the file it comes from and `fingerprint` its content."""

    kind: TrustKind
    name: str
    detail: str
    fingerprint: str
    source: str = ""


KIND_LABELS: dict[TrustKind, str] = {
    "mcp": "MCP server",
    "hooks": "hooks in",
    "allow": "allow rule",
    "mode": "permission mode",
    "directory": "additional directory",
    "sandbox": "sandbox setting",
    "provider": "provider",
    "env": "environment variables in",
    "apiKeys": "API keys in",
    "skill": "allowed-tools of skill",
    "command": "allowed-tools of command",
    "agent": "subagent",
    "identity": "identity file",
}


def item_label(item: TrustItem) -> str:
    """How an item is named to the user: `MCP server docs`, `allow rule Bash`."""
    return f"{KIND_LABELS.get(item.kind, item.kind)} {item.name}"


def fingerprint(*parts: Any) -> str:
    """A short hash of `parts` (JSON, keys sorted): the same content, the same print."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _load(home: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((home / TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, list)} if isinstance(data, dict) else {}


def untrusted(home: Path, project_root: Path, items: list[TrustItem]) -> list[TrustItem]:
    """The items whose current content the user has not agreed to for this project."""
    known = set(_load(home).get(str(project_root.resolve()), []))
    return [item for item in items if item.fingerprint not in known]


def remember(home: Path, project_root: Path, items: list[TrustItem]) -> None:
    data = _load(home)
    key = str(project_root.resolve())
    data[key] = sorted(set(data.get(key, [])) | {item.fingerprint for item in items})
    write_atomically(home / TRUST_FILE, json.dumps(data, indent=2))
