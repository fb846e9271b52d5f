"""CodeSearch: hybrid search over the project's code index.

The index (a `KnowledgeIndex`) is found in `ctx.services.knowledge`; the tools layer
does not import the knowledge package, it calls `search(query, limit)` by duck typing.
The tool reads only the agent's own index, so it needs no permission (docs/permissions.md, "Modes");
in exchange it shows nothing a Read could not: the index drops files the session's
engine refuses, and the results are checked once more against `read_allowed` here.
"""

from __future__ import annotations

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

_OFF = (
    "The code index is turned off for this session (started with --no-knowledge or "
    "unavailable). Use Grep and Glob instead."
)


class CodeSearchArgs(ToolArgs):
    query: str = Field(
        min_length=1,
        description="What the code does in plain words, or identifiers",
    )
    limit: int = Field(default=8, ge=1, le=30, description="Maximum results")


class CodeSearchTool(CompactSpec, Tool[CodeSearchArgs]):
    name = "CodeSearch"
    args_model = CodeSearchArgs
    read_only = True
    needs_permission = False

    def path_argument(self, args: CodeSearchArgs) -> str | None:
        return None

    def describe(self, args: CodeSearchArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"CodeSearch {args.query!r}")

    async def run(self, args: CodeSearchArgs, ctx: ToolContext) -> ToolOutput:
        index = ctx.services.knowledge
        if index is None:
            raise ToolError(_OFF)
        hits = await index.search(args.query, args.limit)
        allowed = ctx.services.read_allowed
        if allowed is not None:
            hits = [h for h in hits if allowed(ctx.project_root / h.path)]
        if not hits:
            return ToolOutput(
                f"No indexed code matches {args.query!r}. The index may still be building; "
                "try Grep for exact text.",
                display=ToolCallDisplay(summary="CodeSearch: no matches"),
            )
        blocks: list[str] = []
        for rank, hit in enumerate(hits, start=1):
            label = f" {hit.kind} {hit.symbol}" if hit.symbol else f" {hit.kind}"
            blocks.append(
                f"{rank}. {hit.path}:{hit.start_line}-{hit.end_line}{label}\n{hit.snippet}"
            )
        text = "\n\n".join(blocks)
        return ToolOutput(
            text,
            display=ToolCallDisplay(
                summary=f"CodeSearch: {len(hits)} results",
                detail="\n".join(f"{h.path}:{h.start_line} {h.symbol}".rstrip() for h in hits),
            ),
        )
