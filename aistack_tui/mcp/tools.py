"""Server tools as our Tools: `mcp__<server>__<tool>`, plus McpToolSearch for many of them.

A built-in tool validates its input with a pydantic model; an MCP tool's input is
described by the server's JSON schema, which we pass to the model unchanged and check
lightly (`jsonschema`, already a dependency of the `mcp` SDK) before the call, so a wrong
argument comes back as a readable error instead of a round trip to the server.

The schema budget: tool definitions are sent with every request, and servers with dozens
of tools can eat a large part of a small model's window (a known complaint with other
agents). When all MCP tool specs together would take more than 10% of the context window,
the model gets one `McpToolSearch{query}` tool instead: it returns the matching tools'
names, descriptions and schemas and registers them, so they are callable by name from the
next model turn on. We chose search-and-load over truncating the list because the model
can still reach every tool, and over a generic `McpCall{name, args}` proxy because each
loaded tool keeps its own name, so permission rules like `mcp__github__create_issue` apply.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict, Field

from aistack_tui.llm.tokens import TOOL_OVERHEAD, estimate_tokens
from aistack_tui.llm.types import ImageBlock, TextBlock, ToolSpec
from aistack_tui.mcp.manager import McpCallError, ProgressSink
from aistack_tui.mcp.remote import RemoteTool
from aistack_tui.mcp.resource_tools import READ_TOOL, ListMcpResourcesTool, ReadMcpResourceTool
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
    ToolRegistry,
)
from aistack_tui.tools.editor import current_call_id
from aistack_tui.tools.schema import CompactSpec

if TYPE_CHECKING:
    import mcp_types

    from aistack_tui.mcp.manager import McpManager

SCHEMA_BUDGET_FRACTION = 0.10
"""MCP tool specs may use this share of the context window before search-and-load."""
"""A server's answer is cut here; the tool runner pages anything over 30 KB on top."""
MAX_IMAGE_CHARS = 5_000_000
"""Base64 characters of images kept from one result (about 3.7 MB of image)."""
MAX_DESCRIPTION_CHARS = 4_000
SEARCH_TOOL_NAME = "McpToolSearch"
_NAME_LIMIT = 64
"""Providers reject longer tool names (Anthropic and OpenAI: ^[a-zA-Z0-9_-]{1,64}$)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, made safe for every provider.

    A tool name with other characters, or too long, gets a short hash of the original
    so two different tools can never end up with the same name.
    """
    safe = _UNSAFE.sub("_", tool)
    name = f"mcp__{server}__{safe}"
    if safe != tool or len(name) > _NAME_LIMIT:
        digest = hashlib.sha256(tool.encode()).hexdigest()[:6]
        name = f"{name[: _NAME_LIMIT - 7]}_{digest}"
    return name


class McpArgs(ToolArgs):
    """Whatever the model sent; the server's JSON schema is the real contract."""

    model_config = ConfigDict(extra="allow")

    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The server's schema with an object root, which every provider requires."""
    out = dict(schema)
    if out.get("type") != "object":
        out["type"] = "object"
    out.setdefault("properties", {})
    return out


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class McpTool(Tool[McpArgs]):
    """One server tool. `make_tool` gives each its own subclass, since `name` is a ClassVar."""

    name: ClassVar[str] = "mcp"
    args_model = McpArgs
    read_only = False  # plan mode denies MCP tools (docs/plan-mode.md): we cannot know they read
    needs_permission = True

    def __init__(self, manager: McpManager, remote: RemoteTool) -> None:
        self.manager = manager
        self.remote = remote

    @property
    def description(self) -> str:
        text = self.remote.description or f"The '{self.remote.name}' tool."
        if len(text) > MAX_DESCRIPTION_CHARS:
            text = text[:MAX_DESCRIPTION_CHARS] + " …"
        return f"{text}\n\n(MCP server '{self.remote.server}', tool '{self.remote.name}')"

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema=_object_schema(self.remote.input_schema),
        )

    @cached_property
    def _validator(self) -> Any:
        from jsonschema import validators
        from jsonschema.exceptions import SchemaError

        schema = _object_schema(self.remote.input_schema)
        cls = validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except SchemaError:
            return None  # the server's schema is broken: let the server judge the input
        return cls(schema)

    def parse_args(self, raw: dict[str, Any]) -> McpArgs:
        if not isinstance(raw, dict):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ToolError(f"Invalid arguments for {self.name}: input must be an object")
        validator = self._validator
        if validator is not None:
            errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.absolute_path))
            if errors:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in err.absolute_path) or 'input'}: {err.message}"
                    for err in errors[:3]
                )
                raise ToolError(f"Invalid arguments for {self.name}: {problems}")
        return McpArgs.model_validate(raw)

    def path_argument(self, args: McpArgs) -> str | None:
        return None  # a server's "path" is its own business, not one of our file locks

    def describe(self, args: McpArgs) -> ToolCallDisplay:
        parts = [f"{k}={_short(v)}" for k, v in args.arguments().items()]
        summary = f"{self.remote.server} · {self.remote.name}"
        if parts:
            summary += " " + _short(", ".join(parts), 100)
        return ToolCallDisplay(summary=summary)

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolOutput:
        server = self.remote.server
        try:
            result = await self.manager.call(
                server, self.remote.name, args.arguments(), progress=_progress_sink(ctx)
            )
        except McpCallError as e:
            raise ToolError(str(e)) from e
        finally:
            declined = self.manager.take_declined(server)
        output = convert_result(result, self.manager.max_result_chars, server=server)
        if declined:
            # The server only hears "declined"; the model should know why.
            note = TextBlock(text="[aistack: " + "; ".join(declined) + "]")
            if isinstance(output.content, str):
                output.content = f"{output.content}\n{note.text}"
            else:
                output.content.append(note)
        output.display = ToolCallDisplay(
            summary=self.describe(args).summary, detail=_text_of(output)[:2000]
        )
        return output


def _progress_sink(ctx: ToolContext) -> ProgressSink | None:
    """Progress the server reports, as lines on the running call's card (the same
    `tool_output` path Bash's live output takes), or None when nobody shows it."""
    listener = ctx.services.tool_output
    if listener is None:
        return None
    call_id = current_call_id.get()

    def show(done: float, total: float | None, message: str | None) -> None:
        count = f"{done:g}/{total:g}" if total else f"{done:g}"
        percent = f" ({done / total:.0%})" if total else ""
        listener(call_id, f"progress {count}{percent}{': ' + message if message else ''}\n")

    return show


def tool_for(manager: McpManager, remote: RemoteTool) -> Tool[Any]:
    """The (cached) adapter tool of one server tool."""
    key = (remote.server, remote.name)
    cached = manager.tool_cache.get(key)
    if cached is not None and cached[0] == remote:
        return cached[1]
    tool = make_tool(manager, remote)
    manager.tool_cache[key] = (remote, tool)
    return tool


def make_tool(manager: McpManager, remote: RemoteTool) -> McpTool:
    cls = type("McpTool_" + _UNSAFE.sub("_", remote.name), (McpTool,),
               {"name": tool_name(remote.server, remote.name)})
    return cls(manager, remote)


# -- results ----------------------------------------------------------------------------


def _text_of(output: ToolOutput) -> str:
    if isinstance(output.content, str):
        return output.content
    return "\n".join(b.text for b in output.content if isinstance(b, TextBlock))


def _resource_block(item: Any) -> TextBlock | ImageBlock:
    res = item.resource
    uri = str(res.uri)
    mime = res.mime_type or ""
    text = getattr(res, "text", None)
    if isinstance(text, str):
        return TextBlock(text=f"[resource {uri}{f' ({mime})' if mime else ''}]\n{text}")
    blob = getattr(res, "blob", "") or ""
    if mime.startswith("image/"):
        return ImageBlock(media_type=mime, data=blob)
    size = len(blob) * 3 // 4
    return TextBlock(text=f"[binary resource {uri} ({mime or 'unknown type'}, {size} bytes)]")


def _link_block(item: Any, server: str) -> TextBlock:
    """A link to a resource, with the call that reads it: the model cannot follow a URI."""
    desc = getattr(item, "description", None)
    mime = getattr(item, "mime_type", None)
    text = f"[resource link {item.uri} {getattr(item, 'name', '')}".rstrip()
    text += f" ({mime})" if mime else ""
    text += f": {desc}" if desc else ""
    if server:
        text += f"; read it with {READ_TOOL}(server={server!r}, uri={str(item.uri)!r})"
    return TextBlock(text=text + "]")


def convert_result(
    result: mcp_types.CallToolResult, max_chars: int, *, server: str = ""
) -> ToolOutput:
    """Our content blocks from a server's answer, cut to `max_chars` of text.

    Text stays text, images become ImageBlocks, embedded resources become text (or an
    image), links and audio are described. Only-text results become one string, which
    every provider renders the same way.
    """
    blocks: list[TextBlock | ImageBlock] = []
    text_chars = image_chars = 0
    dropped_text = dropped_images = 0
    for item in result.content:
        block: TextBlock | ImageBlock
        kind = getattr(item, "type", "")
        if kind == "text":
            block = TextBlock(text=item.text)  # type: ignore[union-attr]
        elif kind == "image":
            block = ImageBlock(media_type=item.mime_type, data=item.data)  # type: ignore[union-attr]
        elif kind == "resource":
            block = _resource_block(item)
        elif kind == "resource_link":
            block = _link_block(item, server)
        elif kind == "audio":
            mime = getattr(item, "mime_type", "audio")
            block = TextBlock(text=f"[audio ({mime}) returned; not shown]")
        else:
            block = TextBlock(text=f"[unsupported content type {kind!r}]")
        if isinstance(block, ImageBlock):
            if image_chars + len(block.data) > MAX_IMAGE_CHARS:
                dropped_images += 1
                continue
            image_chars += len(block.data)
        else:
            room = max_chars - text_chars
            if room <= 0:
                dropped_text += len(block.text)
                continue
            if len(block.text) > room:
                dropped_text += len(block.text) - room
                block = TextBlock(text=block.text[:room])
            text_chars += len(block.text)
        blocks.append(block)
    if not blocks and result.structured_content is not None:
        dumped = json.dumps(result.structured_content, ensure_ascii=False, indent=2)
        if len(dumped) > max_chars:
            dropped_text = len(dumped) - max_chars
            dumped = dumped[:max_chars]
        blocks.append(TextBlock(text=dumped))
    if dropped_text:
        blocks.append(TextBlock(text=(
            f"\n[result truncated: the server returned {text_chars + dropped_text} characters; "
            f"only the first {text_chars} are kept. Ask the tool for less, e.g. a narrower "
            "query or a page.]"
        )))
    if dropped_images:
        blocks.append(TextBlock(text=f"[{dropped_images} image(s) left out: too large]"))
    if not blocks:
        blocks.append(TextBlock(text="(the tool returned no content)"))
    content: str | list[TextBlock | ImageBlock]
    if all(isinstance(b, TextBlock) for b in blocks):
        content = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    else:
        content = blocks
    return ToolOutput(content, is_error=bool(result.is_error))


# -- the schema budget ------------------------------------------------------------------


def spec_tokens(spec: ToolSpec) -> int:
    return estimate_tokens(json.dumps(spec.model_dump(), ensure_ascii=False)) + TOOL_OVERHEAD


def build_tools(manager: McpManager, context_window: int) -> list[Tool[Any]]:
    """Every server tool, or McpToolSearch (plus the tools loaded so far) when over budget."""
    tools = [tool_for(manager, remote) for remote in manager.remote_tools()]
    resource_tools: list[Tool[Any]] = (
        [ListMcpResourcesTool(manager), ReadMcpResourceTool(manager)]
        if manager.resource_servers() else []
    )
    total = sum(spec_tokens(t.spec()) for t in tools)
    if not tools or total <= context_window * SCHEMA_BUDGET_FRACTION:
        return tools + resource_tools
    loaded = [t for t in tools if t.name in manager.search_tool_loaded]
    return [McpToolSearch(manager, total), *loaded, *resource_tools]


class McpToolSearchArgs(ToolArgs):
    query: str = Field(
        min_length=1,
        description="Words to look for in tool names and descriptions, or "
        "'select:NAME,NAME' to load tools by exact name",
    )
    limit: int = Field(5, ge=1, le=20, description="Most tools to return (default 5)")


class McpToolSearch(CompactSpec, Tool[McpToolSearchArgs]):
    """Find MCP tools by keyword and make them callable (deferred loading)."""

    name = SEARCH_TOOL_NAME
    args_model = McpToolSearchArgs
    read_only = True
    needs_permission = False

    def __init__(self, manager: McpManager, total_tokens: int = 0) -> None:
        self.manager = manager
        self.total_tokens = total_tokens

    @property
    def description(self) -> str:
        servers: dict[str, list[str]] = {}
        for remote in self.manager.remote_tools():
            servers.setdefault(remote.server, []).append(remote.name)
        lines = [
            "Search the tools of the connected MCP servers and load them. There are too "
            "many to list in full, so their definitions are loaded on demand: call this "
            "with a few keywords describing what you need (or 'select:NAME,NAME' for exact "
            "names); it returns each match's name, description and input schema, and from "
            "then on you can call the matched tools directly by their names "
            "(mcp__<server>__<tool>).",
            "",
            "Servers and their tools:",
        ]
        budget = 1_500
        for server, names in servers.items():
            listing = ", ".join(names)
            if len(listing) > budget:
                listing = listing[: max(0, budget)].rsplit(",", 1)[0] + ", …"
            budget -= len(listing)
            lines.append(f"- {server} ({len(names)} tools): {listing}")
        return "\n".join(lines)

    def path_argument(self, args: McpToolSearchArgs) -> str | None:
        return None

    def describe(self, args: McpToolSearchArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"{SEARCH_TOOL_NAME} {args.query}")

    def search(self, query: str, limit: int) -> list[McpTool]:
        tools = [tool_for(self.manager, r) for r in self.manager.remote_tools()]
        mcp_tools = [t for t in tools if isinstance(t, McpTool)]
        if query.strip().lower().startswith("select:"):
            wanted = [w.strip() for w in query.split(":", 1)[1].split(",") if w.strip()]
            by_name = {t.name: t for t in mcp_tools}
            by_short = {t.remote.name: t for t in mcp_tools}
            picked = [by_name.get(w) or by_short.get(w) for w in wanted]
            return [t for t in picked if t is not None][:limit]
        words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
        scored: list[tuple[int, int, McpTool]] = []
        for index, tool in enumerate(mcp_tools):
            name = f"{tool.remote.server} {tool.remote.name}".lower()
            desc = tool.remote.description.lower()
            score = 0
            for word in words:
                if word in name:
                    score += 3
                if word in desc:
                    score += 1
            if query.strip() in (tool.name, tool.remote.name):
                score += 100
            if score:
                scored.append((-score, index, tool))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [tool for _, _, tool in scored[:limit]]

    async def run(self, args: McpToolSearchArgs, ctx: ToolContext) -> ToolOutput:
        matches = self.search(args.query, args.limit)
        if not matches:
            servers = sorted({r.server for r in self.manager.remote_tools()})
            return ToolOutput(
                f"No MCP tool matches {args.query!r}. Try other words; the servers are: "
                + (", ".join(servers) or "(none connected)"),
                display=ToolCallDisplay(summary=f"{SEARCH_TOOL_NAME}: no match"),
            )
        registry = ctx.services.tool_registry
        sections: list[str] = []
        for tool in matches:
            spec = tool.spec()
            sections.append(
                f"## {spec.name}\n{spec.description}\n"
                f"Input schema: {json.dumps(spec.input_schema, ensure_ascii=False)}"
            )
            self.manager.search_tool_loaded.add(tool.name)
            if registry is not None:
                registry.register(tool)
        names = ", ".join(t.name for t in matches)
        footer = (
            f"Loaded: {names}. Call them directly by name."
            if isinstance(registry, ToolRegistry)
            else "These tools could not be loaded into this session (no tool registry)."
        )
        return ToolOutput(
            "\n\n".join([*sections, footer]),
            display=ToolCallDisplay(summary=f"{SEARCH_TOOL_NAME}: loaded {names}"),
        )
