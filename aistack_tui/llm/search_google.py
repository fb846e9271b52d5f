"""Web search with Gemini's Google Search grounding (`tools=[{"google_search": {}}]`).

The answer is ordinary text; `groundingMetadata` carries the queries run
(`webSearchQueries`), the pages (`groundingChunks[].web`: a redirect `uri`, the
`title`, usually the site's name, and `domain`) and which span of the answer rests on
which pages (`groundingSupports`). The Gemini Developer API has no domain filter
(`GoogleSearch.exclude_domains` is Vertex AI only), so the filters are spelled out as
`site:` operators in the prompt and applied to the listed sources here.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from google.genai import errors as genai_errors
from google.genai import types as genai_types

from aistack_tui.llm._shared import error_from_status
from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.types import Usage
from aistack_tui.llm.web_search import WebCitation, WebSearchQuery, WebSearchResult, WebSource


class _Models(Protocol):
    async def generate_content(
        self, *, model: str, contents: list[genai_types.Content],
        config: genai_types.GenerateContentConfig,
    ) -> genai_types.GenerateContentResponse: ...


def config() -> dict[str, Any]:
    return {"tools": [{"google_search": {}}]}


async def search(models: _Models, model: str, name: str,
                 query: WebSearchQuery) -> WebSearchResult:
    content = {"role": "user", "parts": [{"text": query.prompt(say_domains=True)}]}
    try:
        response = await models.generate_content(
            model=model,
            contents=[genai_types.Content.model_validate(content)],
            config=genai_types.GenerateContentConfig.model_validate(config()),
        )
    except genai_errors.APIError as e:
        code = cast(object, e.code)  # typed int, but the body's code may be missing
        raise error_from_status(code if isinstance(code, int) else 500, e.message or str(e),
                                provider=name) from e
    except Exception as e:
        raise ProviderError(str(e), provider=name) from e
    result = parse(response)
    result.keep_domains(query)
    return result


def parse(response: genai_types.GenerateContentResponse) -> WebSearchResult:
    result = WebSearchResult(answer="")
    candidate = (response.candidates or [None])[0]
    if candidate is None:
        result.error = "no answer"
        return result
    parts = candidate.content.parts if candidate.content is not None else None
    result.answer = "".join(p.text or "" for p in parts or [] if not p.thought).strip()
    if candidate.grounding_metadata is not None:
        _add_grounding(result, candidate.grounding_metadata)
    usage = response.usage_metadata
    if usage is not None:
        cached = usage.cached_content_token_count or 0
        result.usage = Usage(input_tokens=(usage.prompt_token_count or 0) - cached,
                             output_tokens=usage.candidates_token_count or 0,
                             cache_read_input_tokens=cached)
    return result


def _add_grounding(result: WebSearchResult, meta: genai_types.GroundingMetadata) -> None:
    """The searches run, the pages found and which answer text each page supports."""
    result.queries = list(meta.web_search_queries or [])
    pages = [_page(chunk) for chunk in meta.grounding_chunks or []]
    result.sources = [p for p in pages if p.url]
    for support in meta.grounding_supports or []:
        text = support.segment.text or "" if support.segment is not None else ""
        for i in support.grounding_chunk_indices or []:
            if 0 <= i < len(pages) and pages[i].url:
                result.citations.append(WebCitation(text, pages[i].url, pages[i].title))


def _page(chunk: genai_types.GroundingChunk) -> WebSource:
    web = chunk.web
    if web is None:
        return WebSource("", "")
    return WebSource(web.title or web.domain or "", web.uri or "")
