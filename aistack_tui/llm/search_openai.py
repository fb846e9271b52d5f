"""Web search with OpenAI's `web_search` tool of the Responses API.

The conversation itself talks Chat Completions (`openai.py`, which every compatible
server speaks); search exists only in the Responses API (`client.responses.create` with
`tools=[{"type": "web_search"}]`; the search-preview chat models are the other way, and
a separate model), so the search call alone goes there. The sources come with
`include=["web_search_call.action.sources"]`; the citations are the `url_citation`
annotations of the answer's `output_text`, with the span of text each covers. The API
filters by `filters.allowed_domains`; it has no blocked list, so blocked domains are
asked for in the prompt and removed from the listed sources here.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.responses import Response

from aistack_tui.llm._shared import error_from_status
from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.types import Usage
from aistack_tui.llm.web_search import WebCitation, WebSearchQuery, WebSearchResult, WebSource

TOOL_TYPE = "web_search"


def tool_param(query: WebSearchQuery) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": TOOL_TYPE}
    if query.allowed_domains:
        tool["filters"] = {"allowed_domains": list(query.allowed_domains)}
    return tool


async def search(client: openai.AsyncOpenAI, model: str, name: str,
                 query: WebSearchQuery) -> WebSearchResult:
    # Only the blocked list is spelled out: the allowed one is the API's own filter.
    prompt = WebSearchQuery(query.query, blocked_domains=query.blocked_domains).prompt(
        say_domains=True)
    try:
        response = await client.responses.create(
            model=model,
            input=prompt,
            tools=[tool_param(query)],  # pyright: ignore[reportArgumentType]
            include=["web_search_call.action.sources"],
        )
    except openai.APIStatusError as e:
        raise error_from_status(e.status_code, e.message, provider=name,
                                headers=e.response.headers) from e
    except openai.APIError as e:
        raise ProviderError(str(e), provider=name) from e
    result = parse(response)
    if query.blocked_domains:
        result.keep_domains(WebSearchQuery(query.query, blocked_domains=query.blocked_domains))
    return result


def parse(response: Response) -> WebSearchResult:
    result = WebSearchResult(answer="")
    answer: list[str] = []
    seen: set[str] = set()
    for item in response.output:
        if item.type == "web_search_call":
            action = item.action
            if action.type == "search":
                result.queries += [q for q in [action.query, *(action.queries or [])] if q]
                for source in action.sources or []:
                    if source.url not in seen:
                        seen.add(source.url)
                        result.sources.append(WebSource("", source.url))
            if item.status == "failed":
                result.error = "search failed"
        elif item.type == "message":
            for part in item.content:
                if part.type != "output_text":
                    continue
                answer.append(part.text)
                for note in part.annotations:
                    if note.type == "url_citation":
                        cited = part.text[note.start_index:note.end_index]
                        result.citations.append(WebCitation(cited, note.url, note.title))
    # Cited pages are sources too (with their titles) even when `sources` was not sent.
    titles = {c.url: c.title for c in result.citations}
    result.sources = [WebSource(titles.get(s.url, s.title), s.url) for s in result.sources]
    for url, title in titles.items():
        if url not in seen:
            seen.add(url)
            result.sources.append(WebSource(title, url))
    result.answer = "".join(answer).strip()
    if response.usage is not None:
        cached = response.usage.input_tokens_details.cached_tokens
        result.usage = Usage(input_tokens=response.usage.input_tokens - cached,
                             output_tokens=response.usage.output_tokens,
                             cache_read_input_tokens=cached)
    return result
