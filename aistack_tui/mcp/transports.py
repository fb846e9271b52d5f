"""How aistack reaches a server: a subprocess over stdio, streamable HTTP, SSE, or the
client program's relay for an Agent SDK server (`sdk_transport.py`).

Each returns the (read, write) streams a `ClientSession` runs on, entered into the
connection's exit stack so they close with it. A stdio server's stderr goes to its log
file: left on the terminal it would corrupt the TUI. The transports' SDK modules are
imported here, on the first connection, not when aistack starts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from aistack_tui.mcp.config import (
    HttpServerConfig,
    SdkServerConfig,
    ServerConfig,
    StdioServerConfig,
)
from aistack_tui.mcp.sdk_transport import McpRelay, sdk_streams


async def open_transport(
    cfg: ServerConfig,
    stack: contextlib.AsyncExitStack,
    *,
    log: Callable[[str], None],
    log_path: Path,
    relay: McpRelay | None,
    connect_timeout: float,
    call_timeout: float,
) -> Any:
    if isinstance(cfg, StdioServerConfig):
        from mcp.client.stdio import StdioServerParameters, stdio_client

        log(f"starting {cfg.describe()} (cwd {cfg.cwd})")
        errlog: TextIO = stack.enter_context(log_path.open("a", encoding="utf-8"))
        params = StdioServerParameters(
            command=cfg.command,
            args=list(cfg.args),
            env=dict(cfg.env) or None,
            cwd=cfg.cwd,
        )
        return await stack.enter_async_context(stdio_client(params, errlog=errlog))
    if isinstance(cfg, SdkServerConfig):
        log("connecting through the client program")
        return await stack.enter_async_context(sdk_streams(cfg.name, relay))
    assert isinstance(cfg, HttpServerConfig)
    log(f"connecting to {cfg.describe()}")
    if cfg.type == "sse":
        from mcp.client.sse import sse_client

        return await stack.enter_async_context(
            sse_client(cfg.url, headers=dict(cfg.headers) or None, timeout=connect_timeout)
        )
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=dict(cfg.headers),
            timeout=httpx2.Timeout(connect_timeout, read=call_timeout + 5),
        )
    )
    return await stack.enter_async_context(streamable_http_client(cfg.url, http_client=client))
