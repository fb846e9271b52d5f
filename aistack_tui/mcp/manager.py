"""Connections to MCP servers, each one isolated so a bad server never takes a session down.

Every server gets one long-lived asyncio task that owns its transport and `ClientSession`:
anyio's cancel scopes must be entered and left in the same task, so the connection lives
in its own task and calls borrow the session from outside. A server that fails to start,
hangs, crashes mid-call or answers too slowly is marked `failed` with a readable error
(the last line it wrote to stderr included), its process is stopped, and the next call to
one of its tools starts it again. Tool calls never raise anything but `McpCallError`.

A stdio server's stderr goes to `<log_dir>/mcp-<name>.log`: left on the terminal it would
corrupt the TUI (docs/mcp.md). The `mcp` SDK costs about a second to import, so it is
imported only when the first server connects.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeAlias

from aistack_tui import __version__
from aistack_tui.mcp.config import (
    HttpServerConfig,
    SdkServerConfig,
    ServerConfig,
    StdioServerConfig,
)
from aistack_tui.mcp.sdk_transport import McpRelay, NoRelayError, sdk_streams

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.session import ClientSession

    from aistack_tui.tools.base import Tool

StatusName: TypeAlias = Literal["connecting", "connected", "failed", "disabled"]

DEFAULT_MAX_RESULT_CHARS = 200_000
DEFAULT_CALL_TIMEOUT = 120.0
"""Seconds one tool call may take before the server is declared hung."""
_MAX_TOOL_PAGES = 100
_CLOSE_TIMEOUT = 8.0
"""The SDK's stdio shutdown is bounded at about 6 s (stdin close, SIGTERM, SIGKILL)."""
CLOSE_WAIT_S = 1.0
"""How long closing the manager waits for its servers: a well-behaved one exits at once
when its stdin closes; one that ignores that and SIGTERM goes on being stopped in the
background, and at exit the process's last step kills it (shutdown/run.py)."""


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


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """One tool a server offers, as it described itself."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]


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


def _log_tail(path: Path | None, limit: int = 4096) -> str:
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


class _Connection:
    """One server: its task, session, tools and status."""

    def __init__(
        self,
        config: ServerConfig,
        log_dir: Path,
        connect_timeout: float,
        call_timeout: float,
        on_change: Callable[[ServerStatus], None],
        relay: McpRelay | None = None,
    ) -> None:
        self.config = config
        self.relay = relay
        self.log_path = log_dir / f"mcp-{config.name}.log"
        self.connect_timeout = connect_timeout
        self.call_timeout = config.call_timeout or call_timeout
        self.status: StatusName = "disabled" if config.disabled else "connecting"
        self.error: str | None = None
        self.tools: list[RemoteTool] = []
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._generation = 0
        self._lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()

    # -- status --------------------------------------------------------------------

    def snapshot(self) -> ServerStatus:
        cfg = self.config
        target = cfg.describe()
        return ServerStatus(
            name=cfg.name,
            status=self.status,
            error=self.error,
            tool_count=len(self.tools),
            transport=cfg.type,
            target=target,
            log_path=self.log_path,
        )

    def _set(self, status: StatusName, error: str | None) -> None:
        self.status, self.error = status, error
        self._log(f"status {status}" + (f": {error}" if error else ""))
        with contextlib.suppress(Exception):  # a listener's bug must not break a call
            self._on_change(self.snapshot())

    def _log(self, line: str) -> None:
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as f:
                f.write(f"=== {dt.datetime.now().isoformat(timespec='seconds')} {line}\n")
        except OSError:
            pass

    def _failure(self, reason: str) -> str:
        tail = _log_tail(self.log_path) if isinstance(self.config, StdioServerConfig) else ""
        return f"{reason}; last stderr line: {tail}" if tail else reason

    # -- lifecycle -----------------------------------------------------------------

    async def connect(self) -> None:
        """Start (or restart) the server and wait, bounded, until its tools are listed."""
        async with self._lock:
            if self.status == "connected" and self._session is not None:
                return
            await self._teardown(wait=True)
            self._generation += 1
            self._set("connecting", None)
            ready = asyncio.Event()
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(
                self._serve(ready, self._stop), name=f"mcp-{self.config.name}"
            )
            try:
                await asyncio.wait_for(ready.wait(), self.connect_timeout)
            except TimeoutError:
                self._set(
                    "failed",
                    self._failure(
                        f"did not finish starting within {self.connect_timeout:g} s"
                    ),
                )
                await self._teardown(wait=True)

    async def _serve(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        from mcp.client.session import ClientSession
        from mcp_types import Implementation

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open_transport(stack)
                session = await stack.enter_async_context(
                    ClientSession(
                        read, write, client_info=Implementation(name="aistack",
                                                                version=__version__)
                    )
                )
                await session.initialize()
                self.tools = await self._list_tools(session)
                self._session = session
                self._set("connected", None)
                ready.set()
                await stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as e:
            if not stop.is_set() and self.status != "failed":
                self._set("failed", self._failure(describe_error(e, self.config)))
        finally:
            self._session = None
            ready.set()

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> Any:
        cfg = self.config
        if isinstance(cfg, StdioServerConfig):
            from mcp.client.stdio import StdioServerParameters, stdio_client

            self._log(f"starting {cfg.describe()} (cwd {cfg.cwd})")
            errlog: TextIO = stack.enter_context(self.log_path.open("a", encoding="utf-8"))
            params = StdioServerParameters(
                command=cfg.command,
                args=list(cfg.args),
                env=dict(cfg.env) or None,
                cwd=cfg.cwd,
            )
            return await stack.enter_async_context(stdio_client(params, errlog=errlog))
        if isinstance(cfg, SdkServerConfig):
            self._log("connecting through the client program")
            return await stack.enter_async_context(sdk_streams(cfg.name, self.relay))
        assert isinstance(cfg, HttpServerConfig)
        self._log(f"connecting to {cfg.describe()}")
        if cfg.type == "sse":
            from mcp.client.sse import sse_client

            return await stack.enter_async_context(
                sse_client(cfg.url, headers=dict(cfg.headers) or None,
                           timeout=self.connect_timeout)
            )
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=dict(cfg.headers),
                timeout=httpx2.Timeout(self.connect_timeout, read=self.call_timeout + 5),
            )
        )
        return await stack.enter_async_context(streamable_http_client(cfg.url, http_client=client))

    async def _list_tools(self, session: ClientSession) -> list[RemoteTool]:
        from mcp_types import PaginatedRequestParams

        tools: list[RemoteTool] = []
        cursor: str | None = None
        for _ in range(_MAX_TOOL_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            for tool in page.tools:
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
                tools.append(
                    RemoteTool(
                        server=self.config.name,
                        name=tool.name,
                        description=(tool.description or tool.title or "").strip(),
                        input_schema=schema or {"type": "object", "properties": {}},
                    )
                )
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _teardown(self, *, wait: bool) -> None:
        """Stop the server's task; `wait=False` lets it wind down in the background."""
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._session = None
        if task is None or task.done():
            return
        if stop is not None:
            stop.set()
        finisher = asyncio.create_task(self._finish(task))
        self._closing.add(finisher)
        finisher.add_done_callback(self._closing.discard)
        if wait:
            await asyncio.shield(finisher)

    async def _finish(self, task: asyncio.Task[None]) -> None:
        # A server stuck in its handshake never reaches `stop.wait()`: cancel it then.
        done, _ = await asyncio.wait({task}, timeout=0.5)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=_CLOSE_TIMEOUT)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved, so asyncio does not warn; already reported

    def _fail(self, generation: int, reason: str) -> None:
        """Mark this connection broken (once) and stop its server in the background."""
        if generation != self._generation or self.status == "failed":
            return
        self._set("failed", self._failure(reason))
        task = asyncio.get_running_loop().create_task(self._teardown(wait=False))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        await self._teardown(wait=True)
        pending = set(self._closing)
        if pending:
            await asyncio.wait(pending, timeout=_CLOSE_TIMEOUT + 1)

    # -- calls ---------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        name = self.config.name
        if self.status == "disabled":
            raise McpCallError(f"MCP server '{name}' is disabled ({self.config.source}).")
        if self.status != "connected" or self._session is None:
            await self.connect()
        session = self._session
        if self.status != "connected" or session is None:
            raise McpCallError(
                f"MCP server '{name}' is unavailable: {self.error}. "
                f"Its log is {self.log_path}."
            )
        generation = self._generation
        from mcp.shared.exceptions import MCPError

        timeout = self.call_timeout
        try:
            return await asyncio.wait_for(
                session.call_tool(tool, arguments, read_timeout_seconds=timeout),
                timeout + 5,
            )
        except MCPError as e:
            if e.code == -32001 or "timed out" in e.message:  # REQUEST_TIMEOUT
                raise self._hung(generation, tool, timeout) from e
            if e.code == -32000:  # CONNECTION_CLOSED
                self._fail(generation, f"connection lost during '{tool}'")
                raise McpCallError(
                    f"MCP server '{name}' exited or crashed while running '{tool}' "
                    f"({self.error}). It will be restarted on the next call."
                ) from e
            raise McpCallError(f"MCP server '{name}' rejected '{tool}': {e.message}") from e
        except TimeoutError as e:
            raise self._hung(generation, tool, timeout) from e
        except asyncio.CancelledError:
            raise
        except Exception as e:
            reason = describe_error(e, self.config)
            self._fail(generation, f"'{tool}' failed: {reason}")
            raise McpCallError(
                f"MCP server '{name}' failed while running '{tool}': {reason}. "
                "It will be restarted on the next call."
            ) from e

    def _hung(self, generation: int, tool: str, timeout: float) -> McpCallError:
        self._fail(generation, f"'{tool}' did not answer within {timeout:g} s")
        return McpCallError(
            f"MCP server '{self.config.name}' did not answer '{tool}' within {timeout:g} s; "
            "the server was stopped and will be restarted on the next call."
        )


class McpManager:
    """All configured servers: started in the background, each isolated from the others."""

    def __init__(
        self,
        configs: Mapping[str, ServerConfig],
        log_dir: Path,
        connect_timeout: float = 10.0,
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_result_chars: int | None = None,
        relay: McpRelay | None = None,
    ) -> None:
        self.log_dir = log_dir
        self.max_result_chars = max_result_chars or DEFAULT_MAX_RESULT_CHARS
        self._listeners: list[Callable[[ServerStatus], None]] = []
        self._connections = {
            name: _Connection(cfg, log_dir, connect_timeout, call_timeout, self._notify,
                              relay)
            for name, cfg in configs.items()
        }
        self._starting: set[asyncio.Task[None]] = set()
        self._closing_in_background: asyncio.Future[list[Any]] | None = None
        self.tool_cache: dict[tuple[str, str], tuple[RemoteTool, Tool[Any]]] = {}
        """Adapter tools by (server, tool), kept while the remote tool is unchanged
        (`mcp.tools.tool_for`)."""
        self.search_tool_loaded: set[str] = set()
        """Full names of tools the model loaded through McpToolSearch (deferred mode)."""

    def add_listener(self, listener: Callable[[ServerStatus], None]) -> None:
        """Called with a server's new status on every change (the TUI refreshes `/mcp`)."""
        self._listeners.append(listener)

    def _notify(self, status: ServerStatus) -> None:
        for listener in list(self._listeners):
            listener(status)

    async def start(self) -> None:
        """Begin connecting every enabled server; returns at once."""
        for conn in self._connections.values():
            if conn.status == "disabled":
                continue
            task = asyncio.create_task(conn.connect(), name=f"mcp-start-{conn.config.name}")
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    async def wait_ready(self, timeout: float) -> None:
        """Wait until every server has connected or failed, or `timeout` passes."""
        pending = set(self._starting)
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    def statuses(self) -> list[ServerStatus]:
        return [conn.snapshot() for conn in self._connections.values()]

    def remote_tools(self) -> list[RemoteTool]:
        """Every tool of every server that has listed its tools, in config order."""
        return [t for conn in self._connections.values() for t in conn.tools]

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any]
    ) -> mcp_types.CallToolResult:
        conn = self._connections.get(server)
        if conn is None:
            raise McpCallError(f"no MCP server named '{server}' is configured")
        return await conn.call(tool, arguments)

    async def reconnect(self, name: str) -> ServerStatus:
        """Restart one server now (the `/mcp` reconnect action)."""
        conn = self._connections[name]
        if conn.status != "disabled":
            await conn._teardown(wait=True)  # pyright: ignore[reportPrivateUsage]
            conn.status = "failed"
            await conn.connect()
        return conn.snapshot()

    async def set_enabled(self, name: str, enabled: bool) -> ServerStatus:
        """Turn one server off (stopped, its tools gone) or on again (the client's
        `mcp_toggle`); the caller registers the tools anew."""
        conn = self._connections[name]
        if not enabled:
            await conn._teardown(wait=True)  # pyright: ignore[reportPrivateUsage]
            conn.tools = []
            conn._set("disabled", None)  # pyright: ignore[reportPrivateUsage]
        elif conn.status == "disabled":
            conn.status = "failed"
            await conn.connect()
        return conn.snapshot()

    async def aclose(self, timeout: float = CLOSE_WAIT_S) -> None:
        """Stop every server, waiting `timeout` at most; safe to call twice."""
        for task in list(self._starting):
            task.cancel()
        closing = asyncio.gather(
            *(conn.aclose() for conn in self._connections.values()), return_exceptions=True
        )
        done, _ = await asyncio.wait({closing}, timeout=timeout)
        if not done:
            self._closing_in_background = closing  # kept referenced until it is done
