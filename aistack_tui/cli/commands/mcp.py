"""`aistack mcp list`: connect to every configured MCP server and show its status and tools.

Plain text for people and scripts alike. Exit code 0 when every enabled server connected,
1 when any failed or was not started because the project is not trusted (so CI can check
a project's `.mcp.json`, with `--trust-project`), 2 for a config problem that left no
usable server.

A project's servers start only once the user trusts them, as in a session: an untrusted
one is listed as it is written (`${VAR}` unexpanded) and never started, so listing a
freshly cloned repository's servers cannot run its commands or send it a secret.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig
    from aistack_tui.trust_gate import TrustDecision

DEFAULT_TIMEOUT = 10.0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("mcp", help="list configured MCP servers, their status and tools")
    sub = p.add_subparsers(dest="action")
    lst = sub.add_parser("list", help="connect to each server and list its tools (default)")
    for parser in (p, lst):
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            help=f"seconds to wait for each server to start (default {DEFAULT_TIMEOUT:g})",
        )
        parser.add_argument(
            "--trust-project", action="store_true",
            help="start this project's servers even if it is not trusted yet",
        )


def _first_line(text: str, limit: int = 90) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def run(args: argparse.Namespace, config: RunConfig, trust: TrustDecision) -> int:
    """List the servers of `config` (already gated: see `trust_gate.gate_subcommand`)."""
    from aistack_tui.mcp.config import PROJECT_FILE
    from aistack_tui.mcp.manager import McpManager, ServerStatus
    from aistack_tui.mcp.tools import tool_name
    from aistack_tui.wiring import mcp_server_configs

    out, err = sys.stdout, sys.stderr
    configs, warnings = mcp_server_configs(config, trust)
    for warning in warnings:
        err.write(f"warning: {warning}\n")
    withheld = [item for item in trust.ignored if item.kind == "mcp"]
    for item in withheld:
        out.write(f"{item.name}: not started, the project is not trusted  [{item.detail}]"
                  f"  from {item.source}\n")
    if not configs:
        if withheld:
            return 1
        where = config.mcp_config or config.project_root / PROJECT_FILE
        out.write(
            f"no MCP servers configured (looked in {where} and the user settings' "
            "mcpServers; see docs/mcp.md)\n"
        )
        return 2 if warnings else 0
    timeout = float(getattr(args, "timeout", DEFAULT_TIMEOUT) or DEFAULT_TIMEOUT)
    manager = McpManager(configs, config.home / "logs", connect_timeout=timeout,
                         roots=[config.project_root])
    announced: set[str] = set()

    def progress(status: ServerStatus) -> None:
        # A first `npx -y` / `uvx` run downloads the server: say so instead of hanging.
        if status.installing and status.name not in announced:
            announced.add(status.name)
            out.write(f"{status.name}: {status.label}\n")
            out.flush()

    manager.add_listener(progress)
    try:
        await manager.start()
        await manager.wait_ready(timeout + 15)
        tools_by_server: dict[str, list[tuple[str, str]]] = {}
        for remote in manager.remote_tools():
            tools_by_server.setdefault(remote.server, []).append(
                (tool_name(remote.server, remote.name), _first_line(remote.description))
            )
        failed = False
        for status in manager.statuses():
            source = configs[status.name].source
            count = f"{status.tool_count} tool{'s' if status.tool_count != 1 else ''}"
            out.write(
                f"{status.name}: {status.label}"
                + (f", {count}" if status.status == "connected" else "")
                + f"  [{status.target}]  from {source}\n"
            )
            if status.error:
                out.write(f"  error: {status.error}\n")
            if status.hidden_tools:
                out.write(f"  {status.hidden_tools} task-only tool(s) not offered (MCP tasks "
                          "are not supported yet)\n")
            if status.status == "failed":
                failed = True
                if status.log_path is not None:
                    out.write(f"  log: {status.log_path}\n")
            for name, desc in tools_by_server.get(status.name, []):
                out.write(f"  {name}" + (f"  {desc}" if desc else "") + "\n")
        return 1 if failed or withheld else 0
    finally:
        await manager.aclose()
