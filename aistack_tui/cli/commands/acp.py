"""`aistack acp`: serve the Agent Client Protocol on stdin/stdout for an editor.

The editor starts this as a subprocess; stdout carries only protocol messages, so
diagnostics go to `$AISTACK_HOME/logs/acp.log` (and stderr, which editors show in
their logs).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "acp", help="serve the Agent Client Protocol on stdio (for Zed, JetBrains, ...)",
        description="Run as an ACP agent: an editor starts `aistack acp` and talks JSON-RPC "
        "over stdin/stdout. See docs/channels.md.")
    p.add_argument("-m", "--model", help="PROVIDER/MODEL for new sessions")
    p.add_argument("--permission-mode",
                   choices=("default", "acceptEdits", "plan", "bypassPermissions"),
                   help="permission mode new sessions start in")


def _log_to_file(config: RunConfig) -> None:
    logs = config.home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(logs / "acp.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)


async def serve(args: argparse.Namespace, config: RunConfig) -> int:
    import acp

    from aistack_tui.channels.acp_agent import AcpServer
    from aistack_tui.channels.bus import MessageBus
    from aistack_tui.channels.opener import FacadeOpener

    bus = MessageBus(FacadeOpener(config.env))
    server = AcpServer(bus, model=args.model, mode=args.permission_mode)
    try:
        await acp.run_agent(server)
    finally:
        await server.close()
    return 0


def run(args: argparse.Namespace, config: RunConfig) -> int:
    _log_to_file(config)
    try:
        return asyncio.run(serve(args, config))
    except KeyboardInterrupt:
        return 130
