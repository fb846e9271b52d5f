"""What a server's state looks like from outside, and how its failures are described.

Shared by the manager, the front ends (`/mcp`, the status line) and `aistack mcp list`:
a `ServerStatus` is a plain value, and `describe_error` turns whatever a transport raised
into one line a person can act on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from aistack_tui.mcp.config import ServerConfig, StdioServerConfig
from aistack_tui.mcp.sdk_transport import NoRelayError

StatusName: TypeAlias = Literal["connecting", "connected", "failed", "disabled"]


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What `/mcp` and `aistack mcp list` show for one server."""

    name: str
    status: StatusName
    error: str | None = None
    tool_count: int = 0
    transport: str = "stdio"
    target: str = ""
    log_path: Path | None = None
    installing: bool = False
    """Still starting after the usual timeout, as `npx -y` / `uvx` do while they download
    the server the first time (status `connecting`)."""
    hidden_tools: int = 0
    """Tools left out because they can only run as tasks (`taskSupport: required`)."""

    @property
    def label(self) -> str:
        """The status as people read it: `starting (installing)…` while a download runs."""
        if self.status == "connecting":
            return "starting (installing)…" if self.installing else "starting…"
        return self.status


ProgressSink = Callable[[float, float | None, str | None], None]
"""(progress, total, message) of a running call, as the server reports them."""
LogListener = Callable[[str, str, str], None]
"""(server, level, text) of a log message a server sent."""


class McpCallError(Exception):
    """A call could not reach the server or got no answer; the message is for the model."""


def _leaf_errors(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        leaves: list[BaseException] = []
        for inner in exc.exceptions:  # pyright: ignore[reportUnknownVariableType]
            leaves.extend(_leaf_errors(inner))  # pyright: ignore[reportUnknownArgumentType]
        return leaves
    return [exc]


def describe_error(exc: BaseException, config: ServerConfig) -> str:
    """A one-line reason a person can act on, from whatever the transport raised."""
    leaves = [e for e in _leaf_errors(exc) if not isinstance(e, asyncio.CancelledError)]
    err = leaves[0] if leaves else exc
    if isinstance(err, FileNotFoundError) and isinstance(config, StdioServerConfig):
        return f"command not found: {config.command}"
    if isinstance(err, PermissionError) and isinstance(config, StdioServerConfig):
        return f"command not executable: {config.command}"
    from mcp.shared.exceptions import MCPError

    if isinstance(err, MCPError):
        if err.code == -32000:  # CONNECTION_CLOSED
            return "the server closed the connection (it exited or crashed)"
        return f"server error {err.code}: {err.message}"
    if isinstance(err, NoRelayError):
        return str(err)
    text = str(err).strip() or type(err).__name__
    return f"{type(err).__name__}: {text}" if type(err).__name__ not in text else text


def log_tail(path: Path | None, limit: int = 4096) -> str:
    """The last non-empty line the server wrote to stderr: usually why it died."""
    if path is None:
        return ""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip() and not ln.startswith("===")]
    return lines[-1][:300] if lines else ""
