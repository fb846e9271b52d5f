"""The permission engine as services for tools that reach further than their own call.

A tool call is checked once, for what the model asked for. Some tools then reach more:
Grep and Glob walk a tree whose files the engine never saw one by one, the code index
returns chunks of any indexed file, and WebFetch may be redirected to another host. They
ask these callables, put in `ToolContext.services` (`tools.services.ToolServices`) when
the session is composed, so each file or hop gets the same answer a direct call for it
would get, and the tools layer never holds the engine itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aistack_tui.permissions.targets import McpResourceRead, PathRead, UrlFetch
from aistack_tui.permissions.types import (
    Behavior,
    Decision,
    PermissionChecker,
    PermissionRequest,
)


def read_behavior(engine: PermissionChecker) -> Callable[[Path], Behavior]:
    def behavior(path: Path) -> Behavior:
        request = PermissionRequest(
            "Read", {"file_path": str(path)}, read_only=True, target=PathRead(str(path))
        )
        return engine.check(request).behavior

    return behavior


def read_allowed(engine: PermissionChecker) -> Callable[[Path], bool]:
    """True only when the engine allows a Read of `path` outright (not ask, not deny), so
    a deny rule, a secrets file or a path outside the project keeps a file out of results."""
    behavior = read_behavior(engine)
    return lambda path: behavior(path) == "allow"


def fetch_check(engine: PermissionChecker) -> Callable[[str], Decision]:
    def check(url: str) -> Decision:
        request = PermissionRequest("WebFetch", {"url": url}, read_only=True, target=UrlFetch(url))
        return engine.check(request)

    return check


def resource_behavior(engine: PermissionChecker) -> Callable[[str, str], Behavior]:
    """ListMcpResourcesTool leaves out what reading would be denied, so a denied server
    or URI is not even named to the model."""

    def behavior(server: str, uri: str) -> Behavior:
        request = PermissionRequest(
            "ReadMcpResourceTool",
            {"server": server, "uri": uri},
            read_only=True,
            target=McpResourceRead(server, uri),
        )
        return engine.check(request).behavior

    return behavior
