"""`aistack acp`: serve the Agent Client Protocol on stdin/stdout for an editor.

The editor starts this as a subprocess; stdout carries only protocol messages, so
diagnostics go to `$AISTACK_HOME/logs/acp.log` (and stderr, which editors show in
their logs). The editor closing the connection ends it with status 0; SIGINT or SIGTERM
stops the running turns, closes every session and exits 130 / 143.
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
    from aistack_tui.shutdown.signals import StopSignals

    bus = MessageBus(FacadeOpener(config.env))
    server = AcpServer(bus, model=args.model, mode=args.permission_mode)
    main = asyncio.current_task()
    assert main is not None
    with StopSignals(lambda _signum: main.cancel()) as signals:
        try:
            await acp.run_agent(server)
        except asyncio.CancelledError:
            if signals.received is None:
                raise
            main.uncancel()
        finally:
            await server.close()
    return signals.status or 0


def run(args: argparse.Namespace, config: RunConfig) -> int:
    from aistack_tui.shutdown.run import run_front_end

    _log_to_file(config)
    try:
        return run_front_end(serve(args, config))
    except KeyboardInterrupt:
        return 130
