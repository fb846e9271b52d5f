"""What an ACP editor lends a session: its files, its terminals and its MCP servers.

Files and terminals are the client capabilities `fs.readTextFile`, `fs.writeTextFile` and
`terminal` from `initialize`; they become the services the session's tools use through
the facade (`LiveSession.use_editor_files`, `use_editor_terminal`). The MCP servers of
`session/new` and `session/load` are turned into `.mcp.json` entries, so they pass the
same validation as the project's file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    ClientCapabilities,
    EnvVariable,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
)

ShowTerminal = Callable[[str, str], Awaitable[None]]
"""(tool_use_id, terminal_id): put the terminal into the tool call the editor shows."""
AcpMcpEntry = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


class EditorRefusedError(Exception):
    """The editor answered a request with an error; the message is its own words."""


def refused(error: RequestError) -> EditorRefusedError:
    data = error.data
    detail = data.get("details") or data.get("message") if isinstance(data, dict) else data
    return EditorRefusedError(f"{error}: {detail}" if detail else str(error))


@dataclass(frozen=True, slots=True)
class EditorFiles:
    """`fs/read_text_file` and `fs/write_text_file` for one session."""

    conn: Client
    session_id: str

    async def read(self, path: Path) -> str:
        try:
            response = await self.conn.read_text_file(session_id=self.session_id,
                                                      path=str(path))
        except RequestError as e:
            raise refused(e) from e
        return response.content

    async def write(self, path: Path, text: str) -> None:
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=str(path),
                                            content=text)
        except RequestError as e:
            raise refused(e) from e


@dataclass(frozen=True, slots=True)
class EditorTerminalRun:
    """One `terminal/create`d terminal and the calls on it."""

    conn: Client
    session_id: str
    terminal_id: str

    async def wait_for_exit(self) -> tuple[int | None, str | None]:
        status = await self.conn.wait_for_terminal_exit(session_id=self.session_id,
                                                        terminal_id=self.terminal_id)
        return status.exit_code, status.signal

    async def output(self) -> tuple[str, bool]:
        response = await self.conn.terminal_output(session_id=self.session_id,
                                                   terminal_id=self.terminal_id)
        return response.output, response.truncated

    async def kill(self) -> None:
        await self.conn.kill_terminal(session_id=self.session_id, terminal_id=self.terminal_id)

    async def release(self) -> None:
        await self.conn.release_terminal(session_id=self.session_id,
                                         terminal_id=self.terminal_id)


@dataclass(frozen=True, slots=True)
class EditorTerminals:
    """`terminal/create` for one session; each new terminal is shown in its tool call."""

    conn: Client
    session_id: str
    show: ShowTerminal

    async def create(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                     output_byte_limit: int, tool_use_id: str) -> EditorTerminalRun:
        creating = asyncio.ensure_future(self.conn.create_terminal(
            session_id=self.session_id, command=argv[0], args=list(argv[1:]),
            env=[EnvVariable(name=k, value=v) for k, v in env.items()],
            cwd=str(cwd), output_byte_limit=output_byte_limit))
        run: EditorTerminalRun | None = None
        try:
            # Shielded: a cancel (the turn stopped) arriving while the editor starts the
            # command must still learn its terminal, to release it (which kills it).
            response = await asyncio.shield(creating)
            run = EditorTerminalRun(self.conn, self.session_id, response.terminal_id)
            if tool_use_id:
                await self.show(tool_use_id, response.terminal_id)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                if run is None:
                    response = await creating
                    run = EditorTerminalRun(self.conn, self.session_id, response.terminal_id)
                await run.kill()
                await run.release()
            raise
        return run


def offers_files(capabilities: ClientCapabilities) -> tuple[bool, bool]:
    """(read, write): which of `fs/read_text_file` and `fs/write_text_file` it offers."""
    fs = capabilities.fs
    if fs is None:
        return False, False
    return bool(fs.read_text_file), bool(fs.write_text_file)


def mcp_entries(servers: Sequence[AcpMcpEntry] | None) -> tuple[dict[str, Any], list[str]]:
    """The editor's MCP servers as `.mcp.json` entries by name, and what was left out."""
    entries: dict[str, Any] = {}
    skipped: list[str] = []
    for server in servers or ():
        if isinstance(server, McpServerStdio):
            entries[server.name] = {"command": server.command, "args": list(server.args),
                                    "env": {e.name: e.value for e in server.env}}
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            entries[server.name] = {"type": server.type, "url": server.url,
                                    "headers": {h.name: h.value for h in server.headers}}
        else:
            skipped.append(f"MCP server {server.name!r}: ACP-transport servers are not "
                           "supported")
    return entries, skipped
