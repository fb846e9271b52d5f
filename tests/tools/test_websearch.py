"""The WebSearch tool: offered only with a searching provider, its card and result carry
the answer with numbered citations and the sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.llm.openai_compat import OpenAICompatProvider
from aistack_tui.llm.registry import create_provider, resolve_provider_config
from aistack_tui.llm.types import Usage
from aistack_tui.tools.base import ToolContext, ToolError, ToolRegistry
from aistack_tui.tools.websearch import WebSearchTool
from fakes.fake_llm import FakeLLMServer, Turn
from fakes.fake_llm_search import Hit, Search

HITS = [Hit("Release notes", "https://example.org/notes"),
        Hit("Spam", "https://spam.example.com/x")]


async def test_card_and_result_show_citations_and_sources(ctx: ToolContext) -> None:
    search = Search("widget 2.0", HITS, [("Widget 2.0 shipped in May.", [0]),
                                         (" Nothing else changed.", [])])
    counted: list[Usage] = []
    with FakeLLMServer([Turn(search=search, usage=(120, 30))]) as fake:
        config = resolve_provider_config("anthropic", env=fake.env("anthropic"))
        provider = create_provider(config, "claude-haiku-4-5", timeout=5)
        tool = WebSearchTool(lambda: provider, counted.append)
        try:
            out = await tool.run(tool.parse_args({"query": "widget 2.0"}), ctx)
        finally:
            await provider.aclose()
    assert isinstance(out.content, str)
    assert "Widget 2.0 shipped in May. [1]" in out.content
    assert "[1] Release notes — https://example.org/notes" in out.content
    assert "[2] Spam — https://spam.example.com/x" in out.content
    assert out.display is not None
    assert out.display.summary == 'WebSearch "widget 2.0" (2 sources)'
    assert "https://example.org/notes" in out.display.detail
    assert counted == [Usage(input_tokens=120, output_tokens=30)]  # the search call's tokens
    assert out.metadata["sources"][0] == {"title": "Release notes",
                                          "url": "https://example.org/notes"}


async def test_not_offered_without_a_search(ctx: ToolContext, tmp_path: Path) -> None:
    provider = OpenAICompatProvider("llama3", api_key=None, name="ollama")
    tool = WebSearchTool(lambda: provider)
    registry = ToolRegistry([tool])
    try:
        assert registry.specs() == [] and registry.offered_names() == []
        assert "WebSearch" in registry  # still known, so a stale call gets a clear error
        with pytest.raises(ToolError, match="not available with ollama"):
            await tool.run(tool.parse_args({"query": "anything"}), ctx)
    finally:
        await provider.aclose()
