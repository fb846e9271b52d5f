"""MemorySearch and MemoryWrite: the model's own access to long-term memory.

Both act only inside the agent (the memory database under `$AISTACK_HOME`), so they need
no permission (docs/permissions.md, "Modes"). The manager is found in
`ctx.services.memory`; without
it (`--no-memory`) the tools say memory is off instead of failing obscurely. The tools
layer does not import the memory package: it talks to the manager by duck typing.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field

from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.schema import CompactSpec
from aistack_tui.tools.services import MemoryStore

_OFF = "Memory is turned off for this session (started with --no-memory or unavailable)."


def _manager(ctx: ToolContext) -> MemoryStore:
    manager = ctx.services.memory
    if manager is None:
        raise ToolError(_OFF)
    return manager


class MemorySearchArgs(ToolArgs):
    query: str = Field(
        min_length=1, description="Plain words; exact names (tools, files, services) help"
    )
    limit: int = Field(default=8, ge=1, le=50, description="Maximum results")


class MemorySearchTool(CompactSpec, Tool[MemorySearchArgs]):
    name = "MemorySearch"
    args_model = MemorySearchArgs
    read_only = True
    needs_permission = False

    def path_argument(self, args: MemorySearchArgs) -> str | None:
        return None

    def describe(self, args: MemorySearchArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"MemorySearch {args.query!r}")

    async def run(self, args: MemorySearchArgs, ctx: ToolContext) -> ToolOutput:
        hits = await _manager(ctx).search(args.query, args.limit)
        if not hits:
            return ToolOutput(
                f"No memories or past-session messages match {args.query!r}.",
                display=ToolCallDisplay(summary="MemorySearch: no matches"),
            )
        lines: list[str] = []
        for hit in hits:
            day = dt.datetime.fromtimestamp(hit.created_at).strftime("%Y-%m-%d")
            if hit.record is not None:
                rec = hit.record
                pin = ", pinned" if rec.pinned else ""
                lines.append(f"[{rec.label}] ({rec.kind}, {day}, from {rec.source}{pin}) "
                             f"{rec.content}")
            else:
                title = f" “{hit.session_title}”" if hit.session_title else ""
                lines.append(f"[session {(hit.session_id or '')[:8]}{title}] ({hit.role}, {day}) "
                             f"{hit.text}")
        return ToolOutput(
            "\n".join(lines),
            display=ToolCallDisplay(summary=f"MemorySearch: {len(hits)} results",
                                    detail="\n".join(lines)),
        )


class MemoryWriteArgs(ToolArgs):
    content: str = Field(
        min_length=1,
        description="One self-contained sentence that makes sense without this conversation",
    )
    kind: Literal["semantic", "profile", "episodic"] = Field(
        default="semantic",
        description="semantic: a project fact; profile: about the user, for every project; "
        "episodic: something that happened",
    )


class MemoryWriteTool(CompactSpec, Tool[MemoryWriteArgs]):
    name = "MemoryWrite"
    args_model = MemoryWriteArgs
    read_only = True
    needs_permission = False

    def path_argument(self, args: MemoryWriteArgs) -> str | None:
        return None

    def describe(self, args: MemoryWriteArgs) -> ToolCallDisplay:
        text = " ".join(args.content.split())
        return ToolCallDisplay(summary=f"MemoryWrite ({args.kind}) {text[:60]}")

    async def run(self, args: MemoryWriteArgs, ctx: ToolContext) -> ToolOutput:
        manager = _manager(ctx)
        try:
            record = await manager.write(
                args.content, args.kind, source="model", session_id=ctx.session_id or None
            )
        except ValueError as e:
            raise ToolError(str(e)) from e
        merged = record.times_seen > 1
        text = (
            f"Already remembered as {record.label}; merged (seen {record.times_seen} times)."
            if merged else f"Remembered as {record.label} ({record.kind})."
        )
        return ToolOutput(text, display=ToolCallDisplay(summary=f"MemoryWrite → {record.label}"))
