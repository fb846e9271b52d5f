"""The control protocol of `--input-format stream-json`, both directions.

Claude Code and the Claude Agent SDK exchange `control_request` / `control_response`
lines beside the conversation: the client asks (`initialize`, `interrupt`,
`set_permission_mode`, `set_model`, `mcp_status`, `get_context_usage`, `rewind_files`,
`mcp_reconnect`, `mcp_toggle`, `stop_task`) and the CLI answers; the CLI asks
(`can_use_tool`, `hook_callback`, `mcp_message`) and the client answers.
`ControlChannel` numbers aistack's own requests and matches the answers;
`ControlHandler` answers the client's, through the session facade and `SessionExtras`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from aistack_tui.print_mode.stream_input import ControlReply, ControlRequest
from aistack_tui.settings.layers import ConfigError

Emit = Callable[[dict[str, Any]], None]

# What `initialize` reports; a client reads these, none of them changes behaviour here.
OUTPUT_STYLE = "default"


class ControlError(Exception):
    """A control request failed: the client answered with an error, or went away."""


class ControlChannel:
    """aistack's requests to the client, each awaiting the answer with its id."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._closed: str | None = None

    async def request(self, subtype: str, body: dict[str, Any]) -> dict[str, Any]:
        """Send a request and wait for the answer; ControlError if it fails.

        Cancelled (the turn was interrupted while the client was still deciding): the
        client is told with a `control_cancel_request`, as Claude Code does.
        """
        if self._closed is not None:
            raise ControlError(self._closed)
        request_id = f"aistack_{next(self._ids)}_{os.urandom(4).hex()}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._emit(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": subtype, **body},
            }
        )
        try:
            return await future
        except asyncio.CancelledError:
            if self._closed is None:
                self._emit({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, reply: ControlReply) -> bool:
        """Hand an answer to its request; False when no request has that id."""
        future = self._pending.get(reply.request_id)
        if future is None or future.done():
            return False
        if reply.ok:
            future.set_result(reply.body)
        else:
            future.set_exception(ControlError(reply.error))
        return True

    def close(self, reason: str) -> None:
        """The client stopped reading or writing: fail every request still waiting."""
        self._closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError(reason))

    @property
    def waiting(self) -> int:
        return len(self._pending)

    def answer(self, request_id: str, body: dict[str, Any] | None = None) -> None:
        self._emit(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id,
                             "response": body or {}},
            }
        )

    def answer_error(self, request_id: str, error: str) -> None:
        self._emit(
            {
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error},
            }
        )


class McpStatus(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str | None: ...


class ControlledSession(Protocol):
    """What the client's control requests reach: a subset of the session facade."""

    @property
    def model(self) -> str: ...

    @property
    def mode(self) -> str: ...

    @property
    def running(self) -> bool: ...

    def interrupt(self) -> None: ...

    def set_mode(self, mode: str) -> Any: ...

    async def switch_model(self, model_string: str) -> None: ...

    def available_models(self) -> list[str]: ...

    def mcp_statuses(self) -> Sequence[McpStatus]: ...


class SessionExtras(Protocol):
    """What the client's other requests reach: hooks joining, context usage, file
    rewind, MCP servers (print_mode/session_controls.py adapts the live session)."""

    def join_hooks(self, hooks: Any) -> None:
        """initialize's `hooks` join the session's hooks; ControlError if they cannot."""
        ...

    async def context_usage(self) -> dict[str, Any]: ...

    async def rewind_files(self, user_message_id: str, dry_run: bool) -> dict[str, Any]: ...

    async def mcp_reconnect(self, name: str) -> None: ...

    async def mcp_toggle(self, name: str, enabled: bool) -> None: ...

    async def stop_task(self, task_id: str) -> None: ...


# initialize fields that would change what runs. A client relying on them must not get
# a session that silently goes without (a hook may be its guard), so they are refused.
UNSUPPORTED_INIT_FIELDS: dict[str, str] = {
    "agents": "subagent definitions",
}


class ControlHandler:
    """Answers the client's control requests through the session facade.

    `default_model` is what `set_model` with no model returns to (the model the session
    opened with); `resolve_model` turns a Claude Code model name (`claude-sonnet-4-5`)
    into aistack's `provider/model`.
    """

    def __init__(
        self,
        session: ControlledSession,
        channel: ControlChannel,
        *,
        resolve_model: Callable[[str], str],
        commands: Sequence[dict[str, str]] = (),
        extras: SessionExtras | None = None,
    ) -> None:
        self.session = session
        self.channel = channel
        self.resolve_model = resolve_model
        self.default_model = session.model
        self.commands = list(commands)
        self.extras = extras
        self.initialized = False

    async def handle(self, request: ControlRequest) -> None:
        """Answer one request; a failure becomes an error response, never an exception."""
        try:
            body = await self._dispatch(request)
        except (ControlError, ConfigError, ValueError) as e:
            self.channel.answer_error(request.request_id, str(e))
            return
        except Exception as e:  # whatever failed, the client must get an answer
            # An unanswered request leaves the client waiting for its timeout (a minute in
            # the SDK); the kind of failure is named so it can be reported.
            self.channel.answer_error(request.request_id, f"{type(e).__name__}: {e}")
            return
        self.channel.answer(request.request_id, body)

    async def _dispatch(self, request: ControlRequest) -> dict[str, Any]:
        match request.subtype:
            case "initialize":
                return self._initialize(request.body)
            case "interrupt":
                if self.session.running:
                    self.session.interrupt()
                return {}
            case "set_permission_mode":
                mode = request.body.get("mode")
                if not isinstance(mode, str):
                    raise ControlError("set_permission_mode needs a mode")
                self.session.set_mode(mode)
                return {"mode": self.session.mode}
            case "set_model":
                model = request.body.get("model")
                target = (
                    self.default_model if model in (None, "", "default")
                    else self.resolve_model(str(model))
                )
                await self.session.switch_model(target)
                return {"model": self.session.model}
            case "mcp_status":
                return {"mcpServers": [_mcp_entry(s) for s in self.session.mcp_statuses()]}
            case (
                "get_context_usage" | "rewind_files" | "mcp_reconnect" | "mcp_toggle"
                | "stop_task"
            ) if self.extras is not None:
                return await self._extra(self.extras, request.subtype, request.body)
            case other:
                raise ControlError(f"aistack does not support the control request {other!r}")

    async def _extra(
        self, extras: SessionExtras, subtype: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        match subtype:
            case "get_context_usage":
                return await extras.context_usage()
            case "rewind_files":
                return await extras.rewind_files(
                    _text(body, "user_message_id"), body.get("dry_run") is True
                )
            case "mcp_reconnect":
                await extras.mcp_reconnect(_text(body, "serverName"))
            case "mcp_toggle":
                enabled = body.get("enabled")
                if not isinstance(enabled, bool):
                    raise ControlError("mcp_toggle needs enabled (true or false)")
                await extras.mcp_toggle(_text(body, "serverName"), enabled)
            case _:
                await extras.stop_task(_text(body, "task_id"))
        return {}

    def _initialize(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.initialized:
            raise ControlError("already initialized")
        refused = [
            what for key, what in UNSUPPORTED_INIT_FIELDS.items() if body.get(key)
        ]
        if body.get("hooks") and self.extras is None:
            refused.append("hook callbacks over the control protocol")
        if refused:
            raise ControlError(f"aistack does not support {' or '.join(refused)}")
        if body.get("hooks") and self.extras is not None:
            self.extras.join_hooks(body["hooks"])
        self.initialized = True
        return {
            # A callback with onFailure "block" blocks when it fails (the SDK checks).
            "hook_on_failure_supported": True,
            "commands": self.commands,
            "output_style": OUTPUT_STYLE,
            "available_output_styles": [OUTPUT_STYLE],
            "models": [{"value": m, "displayName": m, "description": ""}
                       for m in self.session.available_models()],
            "account": {},
        }


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise ControlError(f"{body.get('subtype')} needs {key}")
    return value


def _mcp_entry(status: McpStatus) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": status.name, "status": status.status}
    if status.error:
        entry["error"] = status.error
    return entry
