"""`aistack <subcommand>`: sessions, doctor, permissions, index.

Each subcommand module under `cli/commands/` exposes `register(subparsers)`; this module
builds the parser, loads settings once and dispatches.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from aistack_tui.cli.parser import EXIT_USAGE, CliParser


def build_subcommand_parser() -> argparse.ArgumentParser:
    from aistack_tui.cli.commands import (
        acp,
        doctor,
        eval,
        gateway,
        index,
        mcp,
        memory,
        models,
        permissions,
        sessions,
        undo,
    )

    parser = CliParser(prog="aistack")
    subparsers = parser.add_subparsers(dest="command", required=True)
    sessions.register(subparsers)
    doctor.register(subparsers)
    permissions.register(subparsers)
    index.register(subparsers)
    memory.register(subparsers)
    mcp.register(subparsers)
    undo.register(subparsers)
    eval.register(subparsers)
    acp.register(subparsers)
    gateway.register(subparsers)
    models.register(subparsers)
    return parser


PROJECT_RUN = frozenset({"mcp", "permissions", "doctor", "index", "models"})
"""Subcommands that read the project's settings: they honour the trust gate, never asking
(`trust_gate.gate_subcommand`), unless `--trust-project` is given."""
NOTICE_ON_STDERR = frozenset({"mcp", "permissions", "models"})
"""Those whose answer changes with what was left out say so; doctor lists the items as
"not trusted yet" itself, and index uses none of them (its settings are not gated), so a
notice there would only be noise."""


def run_subcommand(argv: Sequence[str]) -> int:
    from aistack_tui.session.config import make_run_config
    from aistack_tui.settings.layers import ConfigError
    from aistack_tui.trust_gate import TrustDecision, gate_subcommand, untrusted_notice

    args = build_subcommand_parser().parse_args(list(argv))
    command = args.command
    try:
        config = make_run_config(trust_project=getattr(args, "trust_project", False) or None)
        trust = TrustDecision()
        if command in PROJECT_RUN:
            config, trust = gate_subcommand(config)
            if trust.ignored and command in NOTICE_ON_STDERR:
                sys.stderr.write(untrusted_notice(trust.ignored) + "\n")
    except ConfigError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return EXIT_USAGE
    if command == "sessions":
        from aistack_tui.cli.commands import sessions

        return asyncio.run(sessions.run(args, config))
    if command == "doctor":
        from aistack_tui.cli.commands import doctor

        return asyncio.run(doctor.run(args, config, trust))
    if command == "permissions":
        from aistack_tui.cli.commands import permissions

        return permissions.run(
            args,
            config.loaded.permission_layers(),
            config.project_root,
            Path(config.env.get("HOME", str(Path.home()))),
            config.permission_mode,
        )
    if command == "index":
        from aistack_tui.cli.commands import index

        return index.run(args, config.home, config.project_root)
    if command == "memory":
        from aistack_tui.cli.commands import memory

        return asyncio.run(memory.run(args, config.home, config.project_root))
    if command == "mcp":
        from aistack_tui.cli.commands import mcp

        return asyncio.run(mcp.run(args, config, trust))
    if command in ("undo", "rewind"):
        from aistack_tui.cli.commands import undo

        return asyncio.run(undo.run(args, config))
    if command == "eval":
        from aistack_tui.cli.commands import eval as eval_command

        return asyncio.run(eval_command.run(args, config))
    if command == "acp":
        from aistack_tui.cli.commands import acp

        return acp.run(args, config)
    if command == "gateway":
        from aistack_tui.cli.commands import gateway

        return gateway.run(args, config)
    if command == "models":
        from aistack_tui.cli.commands import models

        return models.run(args, config)
    sys.stderr.write(f"aistack: unknown command {command}\n")
    return EXIT_USAGE
