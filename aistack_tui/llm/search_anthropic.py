"""Web search with Anthropic's server tool (`web_search_20250305`).

That version is used, not the newer `web_search_20260209` / `_20260318` the SDK also
types, because those add dynamic filtering through code execution, which only the newest
models accept; 20250305 works on every Claude model that can search. Domain filters are
the API's own (`allowed_domains` or `blocked_domains`, never both). The answer comes
back as text blocks whose `citations` name the result each part rests on; the sources
are the `web_search_result` items of the `web_search_tool_result` blocks.
"""

from __future__ import annotations

from typing import Any

import anthropic
from anthropic.types import ContentBlock

from aistack_tui.llm._shared import error_from_status
from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.types import Usage
from aistack_tui.llm.web_search import WebCitation, WebSearchQuery, WebSearchResult, WebSource

TOOL_TYPE = "web_search_20250305"
MAX_TOKENS = 4096


def tool_param(query: WebSearchQuery) -> dict[str, Any]:
    if query.allowed_domains and query.blocked_domains:
        raise ProviderError("Anthropic's web search takes allowed_domains or blocked_domains, "
                            "not both", provider="anthropic")
    tool: dict[str, Any] = {"type": TOOL_TYPE, "name": "web_search", "max_uses": query.max_uses}
    if query.allowed_domains:
        tool["allowed_domains"] = list(query.allowed_domains)
    if query.blocked_domains:
        tool["blocked_domains"] = list(query.blocked_domains)
    return tool


MAX_CONTINUATIONS = 3
"""A long search may stop with `pause_turn`; the API then wants the paused answer sent
back as is to go on. At most this many times."""


async def search(client: anthropic.AsyncAnthropic, model: str, name: str,
                 query: WebSearchQuery) -> WebSearchResult:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": query.prompt(say_domains=False)}]
    blocks: list[ContentBlock] = []
    usage = Usage()
    for _ in range(MAX_CONTINUATIONS + 1):
        try:
            message = await client.messages.create(
                model=model,
                max_tokens=MAX_TOKENS,
                messages=messages,  # pyright: ignore[reportArgumentType]
                tools=[tool_param(query)],  # pyright: ignore[reportArgumentType]
            )
        except anthropic.APIStatusError as e:
            raise error_from_status(e.status_code, e.message, provider=name,
                                    headers=e.response.headers) from e
        except anthropic.APIError as e:
            raise ProviderError(str(e), provider=name) from e
        blocks += message.content
        usage = usage + _usage(message.usage)
        if message.stop_reason != "pause_turn":
            break
        messages = [messages[0], {"role": "assistant", "content": [
            b.model_dump(exclude_none=True) for b in blocks]}]
    result = parse(blocks)
    result.usage = usage
    return result


def _usage(usage: anthropic.types.Usage) -> Usage:
    return Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                 cache_read_input_tokens=usage.cache_read_input_tokens or 0)


def parse(blocks: list[ContentBlock]) -> WebSearchResult:
    """The answer, sources and citations of the content blocks of a search."""
    result = WebSearchResult(answer="")
    answer: list[str] = []
    for block in blocks:
        if block.type == "server_tool_use" and block.name == "web_search":
            query = block.input.get("query")
            if isinstance(query, str):
                result.queries.append(query)
        elif block.type == "web_search_tool_result":
            content = block.content
            if isinstance(content, list):
                result.sources += [WebSource(r.title, r.url, r.page_age) for r in content]
            else:
                result.error = content.error_code
        elif block.type == "text":
            answer.append(block.text)
            for citation in block.citations or []:
                if citation.type == "web_search_result_location":
                    result.citations.append(
                        WebCitation(block.text.strip(), citation.url, citation.title or ""))
    result.answer = "".join(answer).strip()
    return result
