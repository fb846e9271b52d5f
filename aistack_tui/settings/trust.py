"""Which projects' code-running settings the user has approved.

A project's `.mcp.json` servers and its settings hooks run commands from files anyone can
commit. The TUI asks once before starting new or changed ones; the answer is stored per
project under `$AISTACK_HOME/trusted-projects.json` as fingerprints, so a later change to
the project's servers or hooks asks again. Print mode does not ask: the user started it
in that directory on purpose (see docs/mcp.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRUST_FILE = "trusted-projects.json"


@dataclass(frozen=True, slots=True)
class TrustItem:
    """One thing that would run: `kind` is "mcp" or "hooks"; `fingerprint` its content."""

    kind: str
    name: str
    detail: str
    fingerprint: str


def hooks_fingerprint(hooks: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(hooks, sort_keys=True).encode()).hexdigest()[:16]


def _load(home: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((home / TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, list)} if isinstance(data, dict) else {}


def untrusted(home: Path, project_root: Path, items: list[TrustItem]) -> list[TrustItem]:
    known = set(_load(home).get(str(project_root.resolve()), []))
    return [item for item in items if item.fingerprint not in known]


def remember(home: Path, project_root: Path, items: list[TrustItem]) -> None:
    data = _load(home)
    key = str(project_root.resolve())
    data[key] = sorted(set(data.get(key, [])) | {item.fingerprint for item in items})
    home.mkdir(parents=True, exist_ok=True)
    tmp = home / (TRUST_FILE + ".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, home / TRUST_FILE)
