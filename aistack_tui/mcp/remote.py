"""What a server offers, as plain values: its tools, prompts and resources.

Lists are read page by page (bounded, so a server that keeps returning a cursor cannot
loop us forever). A tool whose `execution.taskSupport` is `required` can only run as an
MCP task, which aistack does not call yet: it is left out of the tools the model sees,
and counted, rather than offered and failing on every call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

MAX_PAGES = 100
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """One tool a server offers, as it described itself."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RemotePrompt:
    """One prompt a server offers: `/mcp__<server>__<name> args` in the front ends."""

    server: str
    name: str
    description: str = ""
    arguments: tuple[tuple[str, bool, str], ...] = ()
    """(name, required, description) of each argument, in order."""


@dataclass(frozen=True, slots=True)
class RemoteResource:
    """One resource (or, with `template`, a URI template) a server offers."""

    server: str
    uri: str
    name: str
    description: str = ""
    mime_type: str = ""
    template: bool = False
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(slots=True)
class Listing:
    tools: list[RemoteTool] = field(default_factory=list[RemoteTool])
    hidden_tools: int = 0
    prompts: list[RemotePrompt] = field(default_factory=list[RemotePrompt])
    resources: list[RemoteResource] = field(default_factory=list[RemoteResource])


async def _pages(
    fetch: Callable[[Any], Awaitable[Any]], items: Callable[[Any], list[T]]
) -> list[T]:
    from mcp_types import PaginatedRequestParams

    found: list[T] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(PaginatedRequestParams(cursor=cursor) if cursor else None)
        found.extend(items(page))
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def list_tools(session: ClientSession, server: str) -> tuple[list[RemoteTool], int]:
    """The tools the model may call, and how many were left out as task-only."""
    raw = await _pages(lambda p: session.list_tools(params=p), lambda page: list(page.tools))
    tools: list[RemoteTool] = []
    hidden = 0
    for tool in raw:
        execution = tool.execution
        if execution is not None and execution.task_support == "required":
            hidden += 1
            continue
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        tools.append(RemoteTool(
            server=server,
            name=tool.name,
            description=(tool.description or tool.title or "").strip(),
            input_schema=schema or {"type": "object", "properties": {}},
        ))
    return tools, hidden


async def list_prompts(session: ClientSession, server: str) -> list[RemotePrompt]:
    raw = await _pages(lambda p: session.list_prompts(params=p), lambda page: list(page.prompts))
    return [
        RemotePrompt(
            server=server,
            name=p.name,
            description=(p.description or p.title or "").strip(),
            arguments=tuple(
                (a.name, bool(a.required), (a.description or "").strip())
                for a in p.arguments or []
            ),
        )
        for p in raw
    ]


async def list_resources(session: ClientSession, server: str) -> list[RemoteResource]:
    """Resources and resource templates (a server without templates simply has none)."""
    from mcp.shared.exceptions import MCPError

    raw = await _pages(
        lambda p: session.list_resources(params=p), lambda page: list(page.resources)
    )
    found = [
        RemoteResource(
            server=server, uri=str(r.uri), name=r.name, description=(r.description or "").strip(),
            mime_type=r.mime_type or "",
        )
        for r in raw
    ]
    try:
        templates = await _pages(
            lambda p: session.list_resource_templates(params=p),
            lambda page: list(page.resource_templates),
        )
    except MCPError:
        templates = []
    found += [
        RemoteResource(
            server=server, uri=t.uri_template, name=t.name,
            description=(t.description or "").strip(), mime_type=t.mime_type or "",
            template=True,
        )
        for t in templates
    ]
    return found


async def listing(session: ClientSession, server: str) -> Listing:
    """Everything the server's capabilities say it offers, read after its handshake."""
    caps = session.server_capabilities
    result = Listing()
    if caps is None or caps.tools is not None:
        result.tools, result.hidden_tools = await list_tools(session, server)
    if caps is not None and caps.prompts is not None:
        result.prompts = await list_prompts(session, server)
    if caps is not None and caps.resources is not None:
        result.resources = await list_resources(session, server)
    return result
