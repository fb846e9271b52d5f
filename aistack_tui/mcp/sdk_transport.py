"""The transport of an in-process SDK MCP server (`"type": "sdk"`): JSON-RPC relayed
through the client program that runs the server.

The Claude Agent SDK's `create_sdk_mcp_server` runs the server inside the client's own
process, and the client tells the CLI about it with `{"type": "sdk", "name": ...}` in
`--mcp-config`. Each JSON-RPC message of the connection then travels as an
`mcp_message` control request, and the client answers with the server's response. Here
the MCP client session gets a pair of memory streams as if it talked to a process: what
it writes is handed to the relay one message at a time, and the relay's answers are
what it reads. The relay comes from the front end that speaks to the client
(`McpRelay`); without one (a `.mcp.json` that names an SDK server) the server fails with
a reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

McpRelay: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""(server name, JSON-RPC message) → the server's JSON-RPC response (None for a
notification); raises when the client could not deliver it."""


class NoRelayError(RuntimeError):
    """An SDK server outside a session a client program drives."""


@contextlib.asynccontextmanager
async def sdk_streams(name: str, relay: McpRelay | None) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for a `ClientSession` talking to SDK server `name`."""
    if relay is None:
        raise NoRelayError(
            "an in-process SDK server runs only inside the program that configured it "
            "(aistack driven by the Claude Agent SDK)"
        )
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    to_client, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, from_client = anyio.create_memory_object_stream[SessionMessage](16)

    async def deliver(message: SessionMessage) -> None:
        raw: dict[str, Any] = message.message.model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
        try:
            answer = await relay(name, raw)
        except Exception as e:
            # The client could not deliver it: a request gets the error as its answer,
            # so the call fails with a reason instead of waiting for its timeout.
            if "id" not in raw or "method" not in raw:
                return
            answer = {"jsonrpc": "2.0", "id": raw["id"],
                      "error": {"code": -32603, "message": f"the client failed: {e}"}}
        if answer is None or "method" not in raw or "id" not in raw:
            return  # a notification: the client's acknowledgement carries nothing
        parsed = jsonrpc_message_adapter.validate_python(answer, by_name=False)
        await to_client.send(SessionMessage(parsed))

    async def pump() -> None:
        async with from_client, to_client, anyio.create_task_group() as tasks:
            async for message in from_client:
                # Each message in its own task: a slow tool call must not hold up the
                # next request (or a cancellation) behind it.
                tasks.start_soon(deliver, message)

    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        try:
            yield read_stream, write_stream
        finally:
            group.cancel_scope.cancel()
            await write_stream.aclose()
            await read_stream.aclose()
