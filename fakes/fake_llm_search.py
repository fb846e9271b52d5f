"""Server-side web search answers in the three providers' recorded wire shapes.

A turn with a ``search`` (``Turn(search=Search(...))``) answers as the provider's own
search does: Anthropic's ``server_tool_use`` + ``web_search_tool_result`` blocks and text
blocks with ``web_search_result_location`` citations (anthropic SDK:
``types/web_search_tool_result_block.py``, ``citations_web_search_result_location.py``);
OpenAI's Responses API ``web_search_call`` item with ``action.sources`` and a message
whose ``output_text`` has ``url_citation`` annotations (openai SDK:
``types/responses/response_function_web_search.py``, ``response_output_text.py``);
Gemini's ``groundingMetadata`` with ``webSearchQueries``, ``groundingChunks[].web`` and
``groundingSupports`` (google-genai: ``types.GroundingMetadata``). Plain turns answered
on ``/v1/responses`` get the Responses shape without a search."""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Hit:
    """One page the search found."""

    title: str
    url: str
    page_age: str | None = None


@dataclass
class Search:
    """What the provider's search returns: the query it ran, the pages, and the answer
    as segments, each citing hits by index (an empty list: uncited text)."""

    query: str
    hits: list[Hit]
    answer: list[tuple[str, list[int]]] = field(default_factory=list)
    error_code: str | None = None  # Anthropic's web_search_tool_result_error
    pause_turn: bool = False  # Anthropic: stop with `pause_turn`, to be sent back


def _encrypted(seed: str) -> str:
    return base64.b64encode(("fake-encrypted:" + seed).encode()).decode()


def anthropic_search_content(s: Search, tool_id: str) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [
        {"type": "server_tool_use", "id": tool_id, "name": "web_search",
         "input": {"query": s.query}},
    ]
    if s.error_code:
        result: Any = {"type": "web_search_tool_result_error", "error_code": s.error_code}
    else:
        result = [{"type": "web_search_result", "title": h.title, "url": h.url,
                   "encrypted_content": _encrypted(h.url), "page_age": h.page_age}
                  for h in s.hits]
    content.append({"type": "web_search_tool_result", "tool_use_id": tool_id,
                    "content": result})
    for text, cited in s.answer:
        block: dict[str, Any] = {"type": "text", "text": text}
        if cited:
            block["citations"] = [
                {"type": "web_search_result_location", "url": s.hits[i].url,
                 "title": s.hits[i].title, "encrypted_index": _encrypted(str(i)),
                 "cited_text": text[:150]}
                for i in cited]
        content.append(block)
    return content


def anthropic_server_usage() -> dict[str, Any]:
    return {"web_search_requests": 1}


def openai_response(model: str, response_id: str, text: str, s: Search | None,
                    usage: tuple[int, int]) -> dict[str, Any]:
    """A Responses API `response` object, `status: completed`."""
    output: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    if s is not None:
        output.append({
            "type": "web_search_call", "id": f"ws_{response_id}", "status": "completed",
            "action": {"type": "search", "query": s.query,
                       "sources": [{"type": "url", "url": h.url} for h in s.hits]},
        })
        pieces: list[str] = []
        at = 0
        for segment, cited in s.answer:
            for i in cited:
                annotations.append({"type": "url_citation", "start_index": at,
                                    "end_index": at + len(segment), "url": s.hits[i].url,
                                    "title": s.hits[i].title})
            pieces.append(segment)
            at += len(segment)
        text = "".join(pieces)
    output.append({
        "type": "message", "id": f"msg_{response_id}", "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": annotations,
                     "logprobs": []}],
    })
    tools = [{"type": "web_search", "search_context_size": "medium", "filters": None,
              "user_location": None}] if s is not None else []
    return {
        "id": response_id, "object": "response", "created_at": int(time.time()),
        "status": "completed", "error": None, "incomplete_details": None,
        "instructions": None, "max_output_tokens": None, "model": model,
        "output": output, "parallel_tool_calls": True, "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None}, "store": True, "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto", "tools": tools, "top_p": 1.0, "truncation": "disabled",
        "usage": {"input_tokens": usage[0], "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": usage[1],
                  "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": usage[0] + usage[1]},
        "user": None, "metadata": {},
    }


def google_search_response(model: str, response_id: str, s: Search,
                           usage: tuple[int, int]) -> dict[str, Any]:
    text = "".join(segment for segment, _ in s.answer)
    supports: list[dict[str, Any]] = []
    at = 0
    for segment, cited in s.answer:
        if cited:
            supports.append({
                "segment": {"startIndex": at, "endIndex": at + len(segment.encode()),
                            "text": segment},
                "groundingChunkIndices": cited,
            })
        at += len(segment.encode())
    chunks = [{"web": {"uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
                              + _encrypted(h.url).rstrip("="),
                       "title": h.title, "domain": h.title}} for h in s.hits]
    return {
        "candidates": [{
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": "STOP", "index": 0,
            "groundingMetadata": {
                "webSearchQueries": [s.query],
                "searchEntryPoint": {"renderedContent": "<div class=\"container\"></div>"},
                "groundingChunks": chunks,
                "groundingSupports": supports,
            },
        }],
        "usageMetadata": {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1],
                          "totalTokenCount": usage[0] + usage[1]},
        "modelVersion": model, "responseId": response_id,
    }
