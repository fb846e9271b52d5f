"""Each provider's server-side web search through its own SDK against the fake server,
which answers in the wire shapes the SDKs type: the request carries the provider's search
tool (with domain filters where it has them), and the answer, sources and citations come
back as neutral data."""

from __future__ import annotations

import pytest

from aistack_tui.llm.web_search import WebSearchQuery, searcher_of
from fakes.fake_llm import FakeLLMServer, Turn
from fakes.fake_llm_search import Hit, Search
from tests.llm.conftest import ProviderFactory

HITS = [
    Hit("What's New In Python 3.14", "https://docs.python.org/3/whatsnew/3.14.html", "2 weeks"),
    Hit("Python Release Python 3.14.0", "https://www.python.org/downloads/release/python-3140/"),
    Hit("Python 3.14 is out - LWN.net", "https://lwn.net/Articles/1000000/"),
]
SEARCH = Search(
    query="python 3.14 release date",
    hits=HITS,
    answer=[("Python 3.14.0 was released on 7 October 2025", [1]),
            (" and brings free-threading as a supported build.", [0, 2])],
)


def first_request(fake: FakeLLMServer) -> dict:
    return fake.model_requests[0].body


async def test_anthropic_server_tool(make_provider: ProviderFactory, fake: FakeLLMServer) -> None:
    fake.add(Turn(search=SEARCH))
    searcher = searcher_of(make_provider("anthropic"))
    assert searcher is not None
    found = await searcher.web_search(WebSearchQuery("python 3.14 release date",
                                                     blocked_domains=("pinterest.com",)))
    body = first_request(fake)
    assert fake.model_requests[0].path == "/v1/messages"
    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search",
                              "max_uses": 5, "blocked_domains": ["pinterest.com"]}]
    assert "python 3.14 release date" in body["messages"][0]["content"]
    assert found.queries == ["python 3.14 release date"]
    assert [s.url for s in found.sources] == [h.url for h in HITS]
    assert found.sources[0].page_age == "2 weeks"
    assert found.answer.startswith("Python 3.14.0 was released on 7 October 2025 and brings")
    assert [(c.url, c.title) for c in found.citations][:1] == [(HITS[1].url, HITS[1].title)]
    assert len(found.citations) == 3 and not found.filtered_here


async def test_anthropic_search_error_is_reported(make_provider: ProviderFactory,
                                                  fake: FakeLLMServer) -> None:
    fake.add(Turn(search=Search("q", [], [("I could not search.", [])],
                                error_code="max_uses_exceeded")))
    searcher = searcher_of(make_provider("anthropic"))
    assert searcher is not None
    found = await searcher.web_search(WebSearchQuery("q"))
    assert found.error == "max_uses_exceeded" and found.sources == []


async def test_anthropic_pause_turn_is_sent_back_and_continued(
        make_provider: ProviderFactory, fake: FakeLLMServer) -> None:
    paused = Search("python 3.14 release date", HITS[:1], [], pause_turn=True)
    fake.add(Turn(search=paused), Turn(text="It came out in October 2025.", usage=(7, 3)))
    searcher = searcher_of(make_provider("anthropic"))
    assert searcher is not None
    found = await searcher.web_search(WebSearchQuery("python 3.14 release date"))
    assert len(fake.model_requests) == 2
    sent_back = fake.model_requests[1].body["messages"]
    assert [m["role"] for m in sent_back] == ["user", "assistant"]
    assert [b["type"] for b in sent_back[1]["content"]] == [
        "server_tool_use", "web_search_tool_result"]
    assert found.answer == "It came out in October 2025."
    assert [s.url for s in found.sources] == [HITS[0].url]
    assert found.usage.output_tokens >= 3


async def test_openai_responses_api(make_provider: ProviderFactory, fake: FakeLLMServer) -> None:
    fake.add(Turn(search=SEARCH))
    searcher = searcher_of(make_provider("openai"))
    assert searcher is not None
    found = await searcher.web_search(WebSearchQuery(
        "python 3.14 release date", allowed_domains=("python.org", "lwn.net")))
    request = fake.model_requests[0]
    assert request.path == "/v1/responses"  # not chat completions: search lives here
    assert request.body["tools"] == [{"type": "web_search", "filters": {
        "allowed_domains": ["python.org", "lwn.net"]}}]
    assert request.body["include"] == ["web_search_call.action.sources"]
    assert found.queries == ["python 3.14 release date"]
    assert {s.url for s in found.sources} == {h.url for h in HITS}
    titled = {s.url: s.title for s in found.sources}
    assert titled[HITS[1].url] == HITS[1].title  # titles from the citations
    cited = found.citations[0]
    assert cited.text == "Python 3.14.0 was released on 7 October 2025"
    assert cited.url == HITS[1].url


async def test_openai_blocked_domains_filtered_here(make_provider: ProviderFactory,
                                                    fake: FakeLLMServer) -> None:
    fake.add(Turn(search=SEARCH))
    searcher = searcher_of(make_provider("openai"))
    assert searcher is not None
    found = await searcher.web_search(WebSearchQuery("python 3.14",
                                                     blocked_domains=("lwn.net",)))
    body = fake.model_requests[0].body
    assert "filters" not in body["tools"][0]  # the API has no blocked list
    assert "-site:lwn.net" in body["input"]
    assert "https://lwn.net/Articles/1000000/" not in {s.url for s in found.sources}
    assert found.filtered_here


async def test_google_search_grounding(make_provider: ProviderFactory,
                                       fake: FakeLLMServer) -> None:
    hits = [Hit("python.org", "https://www.python.org/downloads/"),
            Hit("lwn.net", "https://lwn.net/Articles/1/")]
    fake.add(Turn(search=Search("python 3.14 release", hits,
                                [("Python 3.14 came out in October 2025.", [0, 1])])))
    searcher = searcher_of(make_provider("google"))
    assert searcher is not None
    found = await searcher.web_search(WebSearchQuery("python 3.14 release",
                                                     blocked_domains=("lwn.net",)))
    request = fake.model_requests[0]
    assert request.path.endswith(":generateContent")
    assert request.body["tools"] == [{"googleSearch": {}}]
    assert "-site:lwn.net" in request.body["contents"][0]["parts"][0]["text"]
    assert found.queries == ["python 3.14 release"]
    assert found.answer == "Python 3.14 came out in October 2025."
    assert [s.title for s in found.sources] == ["python.org"]  # lwn.net filtered here
    assert [c.title for c in found.citations] == ["python.org"]
    assert found.sources[0].url.startswith("https://vertexaisearch.cloud.google.com/")


@pytest.mark.parametrize("name", ["ollama", "deepseek"])
async def test_compatible_servers_offer_no_search(make_provider: ProviderFactory,
                                                  name: str) -> None:
    from aistack_tui.llm.openai_compat import OpenAICompatProvider

    provider = OpenAICompatProvider("m", api_key="k", base_url="http://127.0.0.1:9", name=name)
    assert searcher_of(provider) is None
    await provider.aclose()
