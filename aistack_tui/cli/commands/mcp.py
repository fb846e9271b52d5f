"""`aistack mcp list`: connect to every configured MCP server and show its status and tools.

Plain text for people and scripts alike. Exit code 0 when every enabled server connected,
1 when any failed (so CI can check a project's `.mcp.json`), 2 for a config problem that
left no usable server.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

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


def _first_line(text: str, limit: int = 90) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def run(
    args: argparse.Namespace,
    project_root: Path,
    home: Path,
    user_servers: dict[str, Any],
    mcp_config: Path | None,
) -> int:
    import os

    from aistack_tui.mcp.config import PROJECT_FILE, load_mcp_config
    from aistack_tui.mcp.manager import McpManager
    from aistack_tui.mcp.tools import tool_name

    out, err = sys.stdout, sys.stderr
    configs, warnings = load_mcp_config(project_root, mcp_config, user_servers, os.environ)
    for warning in warnings:
        err.write(f"warning: {warning}\n")
    if not configs:
        where = mcp_config or project_root / PROJECT_FILE
        out.write(
            f"no MCP servers configured (looked in {where} and the user settings' "
            "mcpServers; see docs/mcp.md)\n"
        )
        return 2 if warnings else 0
    timeout = float(getattr(args, "timeout", DEFAULT_TIMEOUT) or DEFAULT_TIMEOUT)
    manager = McpManager(configs, home / "logs", connect_timeout=timeout)
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
                f"{status.name}: {status.status}"
                + (f", {count}" if status.status == "connected" else "")
                + f"  [{status.target}]  from {source}\n"
            )
            if status.error:
                out.write(f"  error: {status.error}\n")
            if status.status == "failed":
                failed = True
                if status.log_path is not None:
                    out.write(f"  log: {status.log_path}\n")
            for name, desc in tools_by_server.get(status.name, []):
                out.write(f"  {name}" + (f"  {desc}" if desc else "") + "\n")
        return 1 if failed else 0
    finally:
        await manager.aclose()
