"""WebSearch: search the web through the session's provider (`llm/web_search.py`).

Claude Code's tool and input (`query`, `allowed_domains`, `blocked_domains`). It runs
one extra model call with the provider's server-side search and returns the answer with
numbered citation marks and the list of sources, so the model can cite them and the
user sees them on the tool card; print mode's stream-json carries the same result. The
tool is offered only while the current provider has a search (`offered`): after `/model`
to one without, the model is no longer told about it. It asks permission like WebFetch
(`WebSearch` rules).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.types import Usage
from aistack_tui.llm.web_search import (
    WebSearchQuery,
    WebSearchResult,
    WebSource,
    searcher_of,
)
from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.schema import CompactSpec

MAX_SOURCES = 20


class WebSearchArgs(ToolArgs):
    query: str = Field(min_length=2)
    allowed_domains: list[str] | None = Field(
        default=None, description="Only results from these domains"
    )
    blocked_domains: list[str] | None = Field(
        default=None, description="No results from these domains"
    )


class WebSearchTool(CompactSpec, Tool[WebSearchArgs]):
    name = "WebSearch"
    args_model = WebSearchArgs
    read_only = True

    def __init__(self, provider: Callable[[], object],
                 on_usage: Callable[[Usage], None] | None = None) -> None:
        self._provider = provider
        """The session's current provider (it changes with /model and fallbacks)."""
        self._on_usage = on_usage
        """Told the tokens of each search call, so the session's usage and cost count them."""

    def offered(self) -> bool:
        return searcher_of(self._provider()) is not None

    def path_argument(self, args: WebSearchArgs) -> str | None:
        return None

    def describe(self, args: WebSearchArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f'WebSearch "{args.query}"')

    async def run(self, args: WebSearchArgs, ctx: ToolContext) -> ToolOutput:
        provider = self._provider()
        searcher = searcher_of(provider)
        if searcher is None:
            raise ToolError(f"WebSearch is not available with {getattr(provider, 'name', '?')}"
                            " (its API has no web search); use WebFetch on a known URL.")
        query = WebSearchQuery(args.query, tuple(args.allowed_domains or ()),
                               tuple(args.blocked_domains or ()))
        try:
            found = await searcher.web_search(query)
        except ProviderError as e:
            raise ToolError(f"The web search failed: {e}") from e
        if self._on_usage is not None:
            self._on_usage(found.usage)
        if found.error and not found.answer:
            raise ToolError(f"The web search failed ({found.error}); try another query.")
        text, numbered = render(args.query, found)
        summary = f'WebSearch "{args.query}" ({len(numbered)} source'
        summary += "s)" if len(numbered) != 1 else ")"
        return ToolOutput(
            text,
            display=ToolCallDisplay(summary=summary, detail=text, language="markdown"),
            metadata={
                "query": args.query,
                "queries": found.queries,
                "sources": [{"title": s.title, "url": s.url} for s in numbered],
                "citations": [{"text": c.text, "url": c.url, "title": c.title}
                              for c in found.citations],
            },
        )


def render(query: str, found: WebSearchResult) -> tuple[str, list[WebSource]]:
    """The result as the model and the user read it: the answer with `[n]` after each
    cited part, then the numbered sources (cited ones first)."""
    order: list[str] = []
    for url in [c.url for c in found.citations] + [s.url for s in found.sources]:
        if url not in order:
            order.append(url)
    order = order[:MAX_SOURCES]
    by_url = {s.url: s for s in found.sources}
    for c in found.citations:
        by_url.setdefault(c.url, WebSource(c.title, c.url))
    numbered = [by_url[u] for u in order]
    index = {u: i + 1 for i, u in enumerate(order)}
    answer = found.answer
    for citation in found.citations:
        mark = f"[{index[citation.url]}]" if citation.url in index else ""
        text = citation.text.strip()
        if mark and text and text in answer and f"{text} {mark}" not in answer:
            answer = answer.replace(text, f"{text} {mark}", 1)
    lines = [f'Web search results for "{query}"'
             + (f" (searched: {'; '.join(found.queries)})" if found.queries else "") + ":",
             "", answer or "(no answer text)"]
    if numbered:
        lines += ["", "Sources:"]
        lines += [f"[{i}] {s.title or s.url} — {s.url}" + (f" ({s.page_age})" if s.page_age
                                                           else "")
                  for i, s in enumerate(numbered, 1)]
    if found.filtered_here:
        lines += ["", "(Domain filters were applied to the listed sources; this provider's "
                      "search cannot filter by itself.)"]
    if found.error:
        lines += ["", f"(The search reported: {found.error}.)"]
    lines += ["", "Cite the sources you use as markdown links in your answer."]
    return "\n".join(lines), numbered
