"""The model's two resource tools, named and shaped as Claude Code's: `ListMcpResourcesTool
{server?}` and `ReadMcpResourceTool{server, uri}`.

Resources are a server's data (files, records, documents) addressed by URI. They are
offered only when a connected server has some. Reading one is judged by the permission
engine like any call: `ReadMcpResourceTool` rules and the server's own `mcp__<server>`
rule apply (`permissions/engine.py`); with no rule a read is allowed, since it changes
nothing. The same reading serves `@server:uri` mentions in the prompt (`read_text`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import Field

from aistack_tui.llm.types import ImageBlock, TextBlock
from aistack_tui.mcp.manager import McpCallError
from aistack_tui.permissions.targets import McpResourceRead, PermissionTarget
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)

if TYPE_CHECKING:
    import mcp_types

    from aistack_tui.mcp.manager import McpManager

LIST_TOOL = "ListMcpResourcesTool"
READ_TOOL = "ReadMcpResourceTool"
MAX_IMAGE_CHARS = 5_000_000


class ListArgs(ToolArgs):
    server: str | None = Field(
        None, description="The MCP server to list; every connected server when left out"
    )


class ReadArgs(ToolArgs):
    server: str = Field(description="The MCP server the resource belongs to")
    uri: str = Field(description="The URI of the resource, as the list gave it")


class ListMcpResourcesTool(Tool[ListArgs]):
    name = LIST_TOOL
    args_model = ListArgs
    read_only = True
    needs_permission = True

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    @property
    def description(self) -> str:
        return (
            "List the resources (documents, files, records) the connected MCP servers "
            "offer. Each entry has the server's fields (uri, name, description, mimeType) "
            "plus 'server', the server it belongs to; entries with 'uriTemplate' are "
            "templates: fill in the {placeholders} to get a URI. Read one with "
            f"{READ_TOOL}(server, uri).\n\nParameters:\n- server (optional): only this "
            "server's resources"
        )

    def path_argument(self, args: ListArgs) -> str | None:
        return None

    def permission_target(self, args: ListArgs) -> PermissionTarget:
        """The resources of one server, or of every server."""
        return McpResourceRead(args.server or "", "")

    def describe(self, args: ListArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"{LIST_TOOL} {args.server or 'all servers'}")

    async def run(self, args: ListArgs, ctx: ToolContext) -> ToolOutput:
        servers = [args.server] if args.server else self.manager.resource_servers()
        behavior = ctx.services.resource_behavior
        entries: list[dict[str, Any]] = []
        problems: list[str] = []
        for server in servers:
            try:
                found = await self.manager.list_resources(server)
            except McpCallError as e:
                if args.server:
                    raise ToolError(str(e)) from e
                problems.append(str(e))
                continue
            for res in found:
                if behavior is not None and behavior(server, res.uri) == "deny":
                    continue  # reading it is denied: the model need not know it exists
                entry: dict[str, Any] = {"uriTemplate" if res.template else "uri": res.uri,
                                         "name": res.name}
                if res.description:
                    entry["description"] = res.description
                if res.mime_type:
                    entry["mimeType"] = res.mime_type
                entry["server"] = server
                entries.append(entry)
        text = json.dumps(entries, ensure_ascii=False, indent=1) if entries else (
            "No resources found." if servers else "No connected MCP server offers resources."
        )
        if problems:
            text += "\n" + "\n".join(problems)
        return ToolOutput(text, display=ToolCallDisplay(
            summary=f"{LIST_TOOL}: {len(entries)} resource(s)", detail=text[:2000]))


class ReadMcpResourceTool(Tool[ReadArgs]):
    name = READ_TOOL
    args_model = ReadArgs
    read_only = True
    needs_permission = True

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    @property
    def description(self) -> str:
        return (
            "Read a resource from an MCP server, by the server's name and the resource's "
            f"URI (from {LIST_TOOL}, or a resource link a tool returned).\n\nParameters:\n"
            "- server (required): the MCP server to read from\n"
            "- uri (required): the URI of the resource"
        )

    def path_argument(self, args: ReadArgs) -> str | None:
        return None

    def permission_target(self, args: ReadArgs) -> PermissionTarget:
        """One resource of one server."""
        return McpResourceRead(args.server, args.uri)

    def describe(self, args: ReadArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"{READ_TOOL} {args.server} {args.uri}")

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        try:
            result = await self.manager.read_resource(args.server, args.uri)
        except McpCallError as e:
            raise ToolError(str(e)) from e
        blocks = resource_blocks(result, self.manager.max_result_chars)
        content: str | list[TextBlock | ImageBlock]
        if all(isinstance(b, TextBlock) for b in blocks):
            content = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        else:
            content = blocks
        detail = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        return ToolOutput(content, display=ToolCallDisplay(
            summary=self.describe(args).summary, detail=detail[:2000]))


def resource_blocks(
    result: mcp_types.ReadResourceResult, max_chars: int
) -> list[TextBlock | ImageBlock]:
    """A read resource's contents as blocks: text as text (cut at `max_chars`), images
    as images, other binary data described by type and size."""
    blocks: list[TextBlock | ImageBlock] = []
    room = max_chars
    for item in result.contents:
        mime = item.mime_type or ""
        text = getattr(item, "text", None)
        if isinstance(text, str):
            header = f"[resource {item.uri}{f' ({mime})' if mime else ''}]"
            if len(text) > room:
                text = text[: max(room, 0)] + (
                    f"\n[cut: the resource has {len(text)} characters; only {max(room, 0)} "
                    "are kept]"
                )
            room -= len(text)
            blocks.append(TextBlock(text=f"{header}\n{text}"))
            continue
        blob = str(getattr(item, "blob", "") or "")
        if mime.startswith("image/") and len(blob) <= MAX_IMAGE_CHARS:
            blocks.append(ImageBlock(media_type=mime, data=blob))
        else:
            size = len(blob) * 3 // 4
            blocks.append(TextBlock(
                text=f"[binary resource {item.uri} ({mime or 'unknown type'}, {size} bytes); "
                "not shown]"))
    if not blocks:
        blocks.append(TextBlock(text="(the resource is empty)"))
    return blocks


async def read_text(manager: McpManager, server: str, uri: str) -> str:
    """A resource as text for an `@server:uri` mention; raises McpCallError."""
    result = await manager.read_resource(server, uri)
    parts = [
        b.text if isinstance(b, TextBlock) else f"[image {b.media_type}]"
        for b in resource_blocks(result, manager.max_result_chars)
    ]
    return "\n".join(parts)
