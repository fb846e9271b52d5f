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
import warnings
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aistack_tui import __version__
from aistack_tui.mcp.config import ServerConfig, StdioServerConfig
from aistack_tui.mcp.elicitation import NO_ONE_TO_ASK, DeclineElicitation, ElicitationHandler
from aistack_tui.mcp.launch import INSTALL_TIMEOUT, installs_on_first_run
from aistack_tui.mcp.remote import RemotePrompt, RemoteResource, RemoteTool, listing
from aistack_tui.mcp.sdk_transport import McpRelay
from aistack_tui.mcp.status import (
    LogListener,
    McpCallError,
    ProgressSink,
    ServerStatus,
    StatusName,
    describe_error,
    log_tail,
)
from aistack_tui.mcp.transports import open_transport

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.session import ClientSession

    from aistack_tui.mcp.client_side import ClientCallbacks
    from aistack_tui.tools.base import Tool

T = TypeVar("T")

DEFAULT_MAX_RESULT_CHARS = 200_000
DEFAULT_CALL_TIMEOUT = 120.0
"""Seconds one tool call may take before the server is declared hung."""
_CLOSE_TIMEOUT = 8.0
"""The SDK's stdio shutdown is bounded at about 6 s (stdin close, SIGTERM, SIGKILL)."""
CLOSE_WAIT_S = 1.0
"""How long closing the manager waits for its servers: a well-behaved one exits at once
when its stdin closes; one that ignores that and SIGTERM goes on being stopped in the
background, and at exit the process's last step kills it (shutdown/run.py)."""


class _Clock:
    """When a request last showed life (its start, a progress report, an open form)."""

    def __init__(self) -> None:
        self.last = 0.0

    def touch(self) -> None:
        self.last = asyncio.get_running_loop().time()


class _Connection:
    """One server: its task, session, what it offers, and its status."""

    def __init__(
        self,
        config: ServerConfig,
        log_dir: Path,
        connect_timeout: float,
        call_timeout: float,
        on_change: Callable[[ServerStatus], None],
        relay: McpRelay | None = None,
        callbacks: ClientCallbacks | None = None,
        install_timeout: float = INSTALL_TIMEOUT,
    ) -> None:
        self.config = config
        self.relay = relay
        self.log_path = log_dir / f"mcp-{config.name}.log"
        self.connect_timeout = connect_timeout
        self.call_timeout = config.call_timeout or call_timeout
        self.may_install = isinstance(config, StdioServerConfig) and installs_on_first_run(
            config.command, config.args
        )
        self.install_timeout = max(install_timeout, connect_timeout)
        self.status: StatusName = "disabled" if config.disabled else "connecting"
        self.error: str | None = None
        self.installing = False
        self.tools: list[RemoteTool] = []
        self.hidden_tools = 0
        self.prompts: list[RemotePrompt] = []
        self.resources: list[RemoteResource] = []
        self.callbacks = callbacks
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._generation = 0
        self._lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()
        self._serving: set[asyncio.Task[None]] = set()
        """Tasks of this connection that finished their handshake (`_finish`)."""

    # -- status --------------------------------------------------------------------

    def snapshot(self) -> ServerStatus:
        cfg = self.config
        return ServerStatus(
            name=cfg.name,
            status=self.status,
            error=self.error,
            tool_count=len(self.tools),
            transport=cfg.type,
            target=cfg.describe(),
            log_path=self.log_path,
            installing=self.installing,
            hidden_tools=self.hidden_tools,
        )

    def _set(self, status: StatusName, error: str | None) -> None:
        self.status, self.error = status, error
        self._log(f"status {status}" + (" (installing)" if self.installing else "")
                  + (f": {error}" if error else ""))
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
        tail = log_tail(self.log_path) if isinstance(self.config, StdioServerConfig) else ""
        return f"{reason}; last stderr line: {tail}" if tail else reason

    # -- lifecycle -----------------------------------------------------------------

    async def connect(self) -> None:
        """Start (or restart) the server and wait, bounded, until its lists are read.

        A package-runner launch (`npx -y`, `uvx`) that is still starting when the usual
        timeout ends is downloading, most likely: it is marked installing and given the
        install allowance, since stopping it now would break its package cache."""
        async with self._lock:
            if self.status == "connected" and self._session is not None:
                return
            await self._teardown(wait=True)
            self._generation += 1
            self.installing = False
            self._set("connecting", None)
            ready = asyncio.Event()
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(
                self._serve(ready, self._stop), name=f"mcp-{self.config.name}"
            )
            waited = self.connect_timeout
            try:
                await asyncio.wait_for(ready.wait(), self.connect_timeout)
            except TimeoutError:
                if self.may_install and self._task is not None and not self._task.done():
                    self.installing = True
                    self._set("connecting", None)
                    waited = self.install_timeout
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(
                            ready.wait(), self.install_timeout - self.connect_timeout
                        )
                if not ready.is_set():
                    self.installing = False
                    self._set("failed", self._failure(
                        f"did not finish starting within {waited:g} s"))
                    await self._teardown(wait=True)
            if self.installing:
                self.installing = False
                if self.status == "connected":
                    self._set("connected", None)

    async def _serve(self, ready: asyncio.Event, stop: asyncio.Event) -> None:
        from mcp_types import Implementation

        from aistack_tui.mcp.capabilities import AistackClientSession

        callbacks = self.callbacks
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open_transport(stack)
                session = await stack.enter_async_context(
                    AistackClientSession(
                        read, write,
                        client_info=Implementation(name="aistack", version=__version__),
                        list_roots_callback=callbacks.list_roots if callbacks else None,
                        elicitation_callback=callbacks.elicit if callbacks else None,
                        logging_callback=callbacks.on_log if callbacks else None,
                    )
                )
                await session.initialize()
                found = await listing(session, self.config.name)
                self.tools, self.hidden_tools = found.tools, found.hidden_tools
                self.prompts, self.resources = found.prompts, found.resources
                if found.hidden_tools:
                    self._log(f"{found.hidden_tools} task-only tool(s) not offered")
                self._session = session
                self._set("connected", None)
                ready.set()
                me = asyncio.current_task()
                if me is not None:
                    self._serving.add(me)
                await stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as e:
            if not stop.is_set() and self.status != "failed":
                self.installing = False
                self._set("failed", self._failure(describe_error(e, self.config)))
        finally:
            self._session = None
            ready.set()

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> Any:
        return await open_transport(
            self.config, stack, log=self._log, log_path=self.log_path, relay=self.relay,
            connect_timeout=self.connect_timeout, call_timeout=self.call_timeout,
        )

    async def _teardown(self, *, wait: bool) -> None:
        """Stop the server's task; `wait=False` lets it wind down in the background."""
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._session = None
        if task is None or task.done():
            return
        if stop is not None:
            stop.set()
        finisher = asyncio.create_task(self._finish(task, served=task in self._serving))
        self._closing.add(finisher)
        finisher.add_done_callback(self._closing.discard)
        if wait:
            await asyncio.shield(finisher)

    async def _finish(self, task: asyncio.Task[None], *, served: bool) -> None:
        # A server stuck in its handshake never reaches `stop.wait()`: cancel it then. One
        # that did is left the SDK's whole (bounded) shutdown: stdin closed, a grace
        # period, then SIGTERM and SIGKILL to its process group. Cancelling it sooner
        # cuts that shield short and leaves the server running, orphaned (a node server
        # busy right after its handshake does not exit on stdin's close at once).
        done, _ = await asyncio.wait({task}, timeout=_CLOSE_TIMEOUT if served else 0.5)
        self._serving.discard(task)
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

    # -- requests ------------------------------------------------------------------

    async def request(
        self, what: str, send: Callable[[ClientSession, float], Awaitable[T]],
        clock: _Clock | None = None,
    ) -> T:
        """One request to the server (`what` names it in errors: `'tool'`, `resource x`),
        started first if needed; every failure becomes an `McpCallError` for the model,
        and a crash or hang marks the server failed so the next request restarts it."""
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
            return await self._within(send(session, timeout), timeout, clock or _Clock())
        except MCPError as e:
            if e.code == -32001 or "timed out" in e.message:  # REQUEST_TIMEOUT
                raise self._hung(generation, what, timeout) from e
            if e.code == -32000:  # CONNECTION_CLOSED
                self._fail(generation, f"connection lost during {what}")
                raise McpCallError(
                    f"MCP server '{name}' exited or crashed while running {what} "
                    f"({self.error}). It will be restarted on the next call."
                ) from e
            raise McpCallError(f"MCP server '{name}' rejected {what}: {e.message}") from e
        except TimeoutError as e:
            raise self._hung(generation, what, timeout) from e
        except asyncio.CancelledError:
            raise
        except Exception as e:
            reason = describe_error(e, self.config)
            self._fail(generation, f"{what} failed: {reason}")
            raise McpCallError(
                f"MCP server '{name}' failed while running {what}: {reason}. "
                "It will be restarted on the next call."
            ) from e

    async def _within(self, request: Awaitable[T], timeout: float, clock: _Clock) -> T:
        """`request`'s answer, or TimeoutError after `timeout` seconds without a sign of
        life. Progress the server reports restarts the clock, and while the user fills
        in a form the server asked for the clock stops: the user's time is not the
        server's hang (the SDK's own read timeout is not used, it knows neither)."""
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(request)
        clock.touch()
        try:
            while True:
                left = clock.last + timeout - loop.time()
                if left <= 0:
                    raise TimeoutError
                done, _ = await asyncio.wait({task}, timeout=left)
                if done:
                    return task.result()
                if self.callbacks is not None and self.callbacks.asking > 0:
                    clock.touch()
        finally:
            if not task.done():
                task.cancel()

    async def call(
        self, tool: str, arguments: dict[str, Any], report: ProgressSink | None = None
    ) -> mcp_types.CallToolResult:
        clock = _Clock()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            clock.touch()
            if report is not None:
                with contextlib.suppress(Exception):  # showing progress must not fail a call
                    report(progress, total, message)

        return await self.request(
            f"'{tool}'",
            lambda session, timeout: session.call_tool(
                tool, arguments, progress_callback=on_progress
            ),
            clock,
        )

    def _hung(self, generation: int, what: str, timeout: float) -> McpCallError:
        self._fail(generation, f"{what} did not answer within {timeout:g} s")
        return McpCallError(
            f"MCP server '{self.config.name}' did not answer {what} within {timeout:g} s; "
            "the server was stopped and will be restarted on the next call."
        )


class McpManager:
    """All configured servers: started in the background, each isolated from the others.

    `roots` are the directories servers may work in (the session sets the project and its
    added directories); `elicitation` answers a server's questions (the front end's form;
    by default declined, since nobody may be there); `log_listener` sees the servers' log
    messages (set in `--verbose` sessions; they always go to the server's log file).
    """

    def __init__(
        self,
        configs: Mapping[str, ServerConfig],
        log_dir: Path,
        connect_timeout: float = 10.0,
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_result_chars: int | None = None,
        relay: McpRelay | None = None,
        install_timeout: float = INSTALL_TIMEOUT,
        roots: list[Path] | None = None,
    ) -> None:
        from aistack_tui.mcp.client_side import ClientCallbacks

        self.log_dir = log_dir
        self.max_result_chars = max_result_chars or DEFAULT_MAX_RESULT_CHARS
        self.roots: list[Path] = list(roots or [])
        self.elicitation: ElicitationHandler = DeclineElicitation(NO_ONE_TO_ASK)
        self.log_listener: LogListener | None = None
        self.warning_listener: Callable[[str], None] | None = None
        """Sees what the user should hear about even without `--verbose`: a request for
        their input that was declined because nobody could answer."""
        self._listeners: list[Callable[[ServerStatus], None]] = []
        self._connections: dict[str, _Connection] = {}
        for name, cfg in configs.items():
            conn = _Connection(cfg, log_dir, connect_timeout, call_timeout, self._notify,
                               relay, install_timeout=install_timeout)
            conn.callbacks = ClientCallbacks(
                name, lambda: self.roots, lambda: self.elicitation, self._server_log(conn),
                note=conn._log, warn=self._warn,  # pyright: ignore[reportPrivateUsage]
            )
            self._connections[name] = conn
        self._starting: set[asyncio.Task[None]] = set()
        self._closing_in_background: asyncio.Future[list[Any]] | None = None
        self.tool_cache: dict[tuple[str, str], tuple[RemoteTool, Tool[Any]]] = {}
        """Adapter tools by (server, tool), kept while the remote tool is unchanged
        (`mcp.tools.tool_for`)."""
        self.search_tool_loaded: set[str] = set()
        """Full names of tools the model loaded through McpToolSearch (deferred mode)."""

    def _server_log(self, conn: _Connection) -> Callable[[str, str], None]:
        def log(level: str, text: str) -> None:
            conn._log(f"[{level}] {text}")  # pyright: ignore[reportPrivateUsage]
            listener = self.log_listener
            if listener is not None:
                with contextlib.suppress(Exception):
                    listener(conn.config.name, level, text)

        return log

    def set_roots(self, roots: list[Path]) -> None:
        """New roots (`/add-dir`): answered to the next `roots/list`, and every connected
        server is told the list changed, so it asks again."""
        self.roots = list(roots)
        loop = asyncio.get_running_loop()
        for conn in self._connections.values():
            session = conn._session  # pyright: ignore[reportPrivateUsage]
            if conn.status == "connected" and session is not None:
                task = loop.create_task(self._roots_changed(conn.config.name, session))
                self._starting.add(task)  # kept referenced, and cancelled by aclose
                task.add_done_callback(self._starting.discard)

    async def _roots_changed(self, name: str, session: ClientSession) -> None:
        from mcp.shared.exceptions import MCPDeprecationWarning

        try:  # roots are deprecated from the 2026-07-28 revision on (SEP-2577), not in the
            # handshake versions servers speak: the SDK's warning is noise here
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.send_roots_list_changed()
        except Exception as e:  # a server that went away hears at its restart anyway
            self._connections[name]._log(f"roots/list_changed not sent: {e}")  # pyright: ignore[reportPrivateUsage]

    def _warn(self, text: str) -> None:
        listener = self.warning_listener
        if listener is not None:
            with contextlib.suppress(Exception):
                listener(text)

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
        """Wait until every server has connected or failed, or `timeout` passes; a server
        still installing itself (`npx -y` on its first run) is waited for to the end of
        its install allowance, since a run without its tools would fail anyway."""
        pending = set(self._starting)
        if pending:
            await asyncio.wait(pending, timeout=timeout)
        # `may_install`, not `installing`: a server reaching the end of its normal timeout
        # just now may not have switched to installing yet.
        installing = [c for c in self._connections.values()
                      if c.may_install and c.status == "connecting"]
        pending = set(self._starting)
        if installing and pending:
            await asyncio.wait(pending, timeout=max(c.install_timeout for c in installing))

    def statuses(self) -> list[ServerStatus]:
        return [conn.snapshot() for conn in self._connections.values()]

    def remote_tools(self) -> list[RemoteTool]:
        """Every tool of every server that has listed its tools, in config order."""
        return [t for conn in self._connections.values() for t in conn.tools]

    def remote_prompts(self) -> list[RemotePrompt]:
        """Every prompt of every connected server, in config order."""
        return [p for conn in self._connections.values() for p in conn.prompts]

    def remote_resources(self) -> list[RemoteResource]:
        """The resources (and templates) servers listed when they connected, or when
        they were last listed: what `@` completion offers."""
        return [r for conn in self._connections.values() for r in conn.resources]

    def _connection(self, server: str) -> _Connection:
        conn = self._connections.get(server)
        if conn is None:
            known = ", ".join(self._connections) or "none"
            raise McpCallError(f"no MCP server named '{server}' is configured (servers: {known})")
        return conn

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any],
        progress: ProgressSink | None = None,
    ) -> mcp_types.CallToolResult:
        return await self._connection(server).call(tool, arguments, progress)

    def take_declined(self, server: str) -> list[str]:
        """Why requests of `server` for the user's input were declined since last asked."""
        conn = self._connections.get(server)
        return conn.callbacks.take_declined() if conn and conn.callbacks else []

    async def list_resources(self, server: str) -> list[RemoteResource]:
        """Ask the server for its resources now (they may have changed since it started)."""
        from aistack_tui.mcp.remote import list_resources

        conn = self._connection(server)
        found = await conn.request("resources/list",
                                   lambda session, _t: list_resources(session, server))
        conn.resources = found
        return found

    async def read_resource(self, server: str, uri: str) -> mcp_types.ReadResourceResult:
        return await self._connection(server).request(
            f"reading {uri}", lambda session, _t: session.read_resource(uri)
        )

    async def get_prompt(
        self, server: str, name: str, arguments: dict[str, str]
    ) -> mcp_types.GetPromptResult:
        return await self._connection(server).request(
            f"prompt '{name}'", lambda session, _t: session.get_prompt(name, arguments or None)
        )

    def resource_servers(self) -> list[str]:
        """Connected servers that offer resources (listed or not yet listed)."""
        return [name for name, conn in self._connections.items()
                if conn.status == "connected" and conn.resources]

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
            conn.tools, conn.prompts, conn.resources = [], [], []
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
