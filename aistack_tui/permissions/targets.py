"""What a tool call touches, as typed values the permission engine judges.

A built-in tool declares its target from its validated arguments (`Tool.permission_target`
in tools/), so the engine matches rules against a path, a command or a URL instead of
digging keys out of a raw input dict by tool name. A request that comes without one
(a settings self-test, `aistack permissions check`, a hook's or a client's call, an MCP
tool) gets its target from `target_from_input`, which reads the input the way Claude
Code's settings describe each tool: the same target the tool itself would declare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

READ_FAMILY: frozenset[str] = frozenset({"Read", "Grep", "Glob", "LS"})
"""Tools that read files: a `Read(...)` rule covers them all."""
EDIT_FAMILY: frozenset[str] = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Tools that write files: an `Edit(...)` rule covers them all."""
MCP_RESOURCE_TOOLS: frozenset[str] = frozenset({"ListMcpResourcesTool", "ReadMcpResourceTool"})
"""Read an MCP server's resources: judged by their own rules and the server's `mcp__server`."""


@dataclass(frozen=True, slots=True)
class PathRead:
    """A file or a tree the tool reads (Read, Grep, Glob, LS).

    `pattern` is a Glob pattern, which may climb out of `path` (`../x/*`, `/etc/*`): the
    directory it starts from is judged too. `opens`: the tool opens this one file and
    nothing else, so the decision pins the resolved path it judged (tools/file_target.py).
    """

    path: str
    pattern: str | None = None
    opens: bool = False


@dataclass(frozen=True, slots=True)
class PathWrite:
    """A file the tool writes (Edit, Write, MultiEdit, NotebookEdit): it writes this
    resolved file or nothing, so the decision always pins it."""

    path: str


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """A shell command line, analysed part by part (the request's `cwd` is where it runs)."""

    command: str


@dataclass(frozen=True, slots=True)
class UrlFetch:
    """A URL the tool fetches: judged by its host (`WebFetch(domain:…)`)."""

    url: str


@dataclass(frozen=True, slots=True)
class McpResourceRead:
    """An MCP server's resources, listed or read: the resource rules and the server's own
    `mcp__server` rule decide. `server` and `uri` are empty when the call names none."""

    server: str
    uri: str


@dataclass(frozen=True, slots=True)
class WholeTool:
    """Nothing finer than the tool itself: only bare rules (`WebSearch`,
    `mcp__server__tool`) and the mode decide. What MCP and unknown tools get."""


@dataclass(frozen=True, slots=True)
class UnusableInput:
    """An input the engine cannot judge (no command, a path that is not a string): asks."""

    reason: str


PermissionTarget: TypeAlias = (
    PathRead | PathWrite | ShellCommand | UrlFetch | McpResourceRead | WholeTool | UnusableInput
)

_WRITE_PATH_KEYS = ("file_path", "notebook_path")


def target_from_input(tool: str, tool_input: Mapping[str, Any]) -> PermissionTarget:
    """The target of a call known only by its tool name and raw input."""
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return UnusableInput("Bash was called without a command")
        return ShellCommand(command)
    if tool in READ_FAMILY:
        return _read_target(tool, tool_input)
    if tool in EDIT_FAMILY:
        raw = next((tool_input[k] for k in _WRITE_PATH_KEYS if k in tool_input), None)
        if not isinstance(raw, str):
            return UnusableInput(f"{tool} was called without a file path")
        return PathWrite(raw)
    if tool == "WebFetch":
        url = tool_input.get("url")
        if not isinstance(url, str):
            return UnusableInput("WebFetch was called without a URL")
        return UrlFetch(url)
    if tool in MCP_RESOURCE_TOOLS:
        server, uri = tool_input.get("server"), tool_input.get("uri")
        return McpResourceRead(
            server if isinstance(server, str) else "", uri if isinstance(uri, str) else ""
        )
    return WholeTool()


def _read_target(tool: str, tool_input: Mapping[str, Any]) -> PermissionTarget:
    key = "file_path" if tool == "Read" else "path"
    raw = tool_input.get(key)
    if raw is None and tool != "Read":
        raw = "."
    if not isinstance(raw, str):
        return UnusableInput(f"{tool} was called without a usable {key}")
    if tool == "Read":
        return PathRead(raw, opens=True)
    pattern = tool_input.get("pattern") if tool == "Glob" else None
    return PathRead(raw, pattern if isinstance(pattern, str) else None)
