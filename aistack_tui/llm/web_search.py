"""Web search through the provider's own server-side search, as neutral data.

The WebSearch tool makes one extra model call with the provider's search switched on
(Anthropic's `web_search` server tool, OpenAI's `web_search` tool of the Responses API,
Gemini's Google Search grounding) and hands the answer, the sources and the citations
back as a tool result, as Claude Code does. Keeping search out of the conversation's own
requests means the permission engine sees a `WebSearch` call like any other (and can ask
or deny it), no provider-specific block ever enters the stored history, and a session
keeps working when it moves to a model without search.

A provider offers search by having `web_search` and a true `web_search_available`;
`searcher_of` is the one place that asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable
from urllib.parse import urlsplit

from aistack_tui.llm.types import Usage

SEARCH_PROMPT = (
    "Search the web for: {query}\n\n"
    "Answer from what the search finds: the facts that matter, each with its source."
)
DEFAULT_MAX_USES = 5


@dataclass(frozen=True, slots=True)
class WebSearchQuery:
    query: str
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    max_uses: int = DEFAULT_MAX_USES

    def prompt(self, *, say_domains: bool) -> str:
        """The search request; with `say_domains` the domain filters are spelled out as
        search operators, for a provider that has no filter of its own."""
        text = SEARCH_PROMPT.format(query=self.query)
        if say_domains and self.allowed_domains:
            sites = " OR ".join(f"site:{d}" for d in self.allowed_domains)
            text += f"\nOnly use results from these sites ({sites})."
        if say_domains and self.blocked_domains:
            sites = " ".join(f"-site:{d}" for d in self.blocked_domains)
            text += f"\nNever use results from these sites ({sites})."
        return text


@dataclass(frozen=True, slots=True)
class WebSource:
    title: str
    url: str
    page_age: str | None = None


@dataclass(frozen=True, slots=True)
class WebCitation:
    """A part of the answer (`text`) and the source it rests on."""

    text: str
    url: str
    title: str = ""


@dataclass(slots=True)
class WebSearchResult:
    answer: str
    sources: list[WebSource] = field(default_factory=list[WebSource])
    citations: list[WebCitation] = field(default_factory=list[WebCitation])
    queries: list[str] = field(default_factory=list[str])
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    """The provider's search failed (`max_uses_exceeded`, `unavailable`, ...)."""
    filtered_here: bool = False
    """Domain filters were applied to the listed sources here, not by the provider."""

    def keep_domains(self, query: WebSearchQuery) -> None:
        """Drop sources and citations outside the query's domain filters (for providers
        whose search cannot filter by itself)."""
        if not (query.allowed_domains or query.blocked_domains):
            return
        self.sources = [s for s in self.sources if domain_allowed(s.url, s.title, query)]
        self.citations = [c for c in self.citations if domain_allowed(c.url, c.title, query)]
        self.filtered_here = True


@runtime_checkable
class WebSearcher(Protocol):
    @property
    def web_search_available(self) -> bool: ...

    async def web_search(self, query: WebSearchQuery) -> WebSearchResult: ...


def searcher_of(provider: object) -> WebSearcher | None:
    """The provider's server-side search, or None when it has none."""
    if isinstance(provider, WebSearcher) and provider.web_search_available:
        return provider
    return None


def _matches(host: str, domain: str) -> bool:
    domain = domain.lower().strip().removeprefix("*.").rstrip("/")
    return host == domain or host.endswith("." + domain)


def domain_allowed(url: str, label: str, query: WebSearchQuery) -> bool:
    """Whether a source passes the filters. `label` stands in for the host when the URL
    is a redirect (Gemini's grounding links point at Google and name the site instead)."""
    hosts = [h for h in ((urlsplit(url).hostname or "").lower(), label.lower().strip()) if h]
    if query.blocked_domains and any(
            _matches(h, d) for h in hosts for d in query.blocked_domains):
        return False
    if query.allowed_domains:
        return any(_matches(h, d) for h in hosts for d in query.allowed_domains)
    return True
