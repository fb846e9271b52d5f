"""An AGENTS.md skeleton for `/init`: what can be read off the project's files, no model.

The commands come from the build files that are there (pyproject.toml, package.json,
Cargo.toml, go.mod, a Makefile), the layout from the top-level directories. Everything
else is a heading with a one-line hint, for the user (or `/init model`) to fill in.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

SKIP_DIRS = {"node_modules", "target", "dist", "build", "venv", "__pycache__"}
MAX_DIRS = 20


def detect_commands(root: Path) -> list[tuple[str, str]]:
    """(what, command) pairs for the build systems found at `root`."""
    found: list[tuple[str, str]] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
        except (OSError, tomllib.TOMLDecodeError):
            tool = {}
        found.append(("install", "pip install -e ."))
        found.append(("test", "pytest"))
        if "ruff" in tool:
            found.append(("lint", "ruff check ."))
        if "mypy" in tool:
            found.append(("types", "mypy ."))
        elif "pyright" in tool:
            found.append(("types", "pyright"))
    package = root / "package.json"
    if package.is_file():
        try:
            scripts = json.loads(package.read_text(encoding="utf-8")).get("scripts", {})
        except (OSError, ValueError, AttributeError):
            scripts = {}
        found.append(("install", "npm install"))
        for name in ("build", "test", "lint", "typecheck", "format"):
            if isinstance(scripts, dict) and name in scripts:
                found.append((name, f"npm run {name}" if name != "test" else "npm test"))
    if (root / "Cargo.toml").is_file():
        found += [("build", "cargo build"), ("test", "cargo test"), ("lint", "cargo clippy")]
    if (root / "go.mod").is_file():
        found += [("build", "go build ./..."), ("test", "go test ./..."), ("lint", "go vet ./...")]
    makefile = root / "Makefile"
    if makefile.is_file():
        try:
            targets = re.findall(r"^([A-Za-z][\w-]*):", makefile.read_text(encoding="utf-8"), re.M)
        except OSError:
            targets = []
        for target in ("build", "test", "lint", "check"):
            if target in targets:
                found.append((target, f"make {target}"))
    return found


def top_level_dirs(root: Path) -> list[str]:
    try:
        dirs = sorted(
            p.name for p in root.iterdir()
            if p.is_dir() and not p.name.startswith(".") and p.name not in SKIP_DIRS
        )
    except OSError:
        return []
    return dirs[:MAX_DIRS]


def skeleton(root: Path) -> str:
    """The AGENTS.md text for the project at `root`."""
    lines = [f"# {root.name}", "", "Guidance for coding agents (and people) working in this "
             "repository.", "", "## Commands", ""]
    commands = detect_commands(root)
    if commands:
        lines += [f"- {what}: `{cmd}`" for what, cmd in commands]
    else:
        lines.append("- (how to build, test and lint: fill in)")
    lines += ["", "## Layout", ""]
    dirs = top_level_dirs(root)
    if dirs:
        lines += [f"- `{d}/`: (what lives here)" for d in dirs]
    else:
        lines.append("- (the main directories and what they hold)")
    lines += [
        "",
        "## Conventions",
        "",
        "- (code style, naming, how errors are handled)",
        "- (what every change needs: tests, docs, changelog)",
        "",
    ]
    return "\n".join(lines)
