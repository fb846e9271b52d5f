"""WebSearch end to end in print mode, per provider: the model calls it, aistack runs the
provider's own search (served by the fake in that provider's wire shape), and the answer
with its numbered citations and sources reaches the model and stream-json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from fakes.fake_llm_search import Hit, Search
from tests.e2e.helpers import (
    FAST_RETRY,
    assert_stream_json_shape,
    run_aistack,
    write_user_settings,
)

pytestmark = pytest.mark.slow
MODELS = {"anthropic": "anthropic/claude-sonnet-4-6", "openai": "openai/gpt-4.1",
          "google": "google/gemini-2.5-pro"}
HITS = [Hit("python.org", "https://www.python.org/downloads/release/python-3140/"),
        Hit("docs.python.org", "https://docs.python.org/3/whatsnew/3.14.html")]
SEARCH = Search("python 3.14 release date", HITS,
                [("Python 3.14.0 was released on 7 October 2025.", [0]),
                 (" Free-threading is now supported.", [1])])
FINAL = "Python 3.14 came out on 7 October 2025.\n\nSources:\n- [python.org](https://www.python.org/)"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "google"])
def test_web_search_per_provider(provider: str, git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    script = [Turn(tool_calls=[ToolCall("WebSearch", {"query": "python 3.14 release date"})]),
              Turn(search=SEARCH),  # the search call the WebSearch tool makes
              Turn(text=FINAL)]
    with FakeLLMServer(script) as server:
        proc = run_aistack(["-p", "when did python 3.14 come out?", "--model",
                            MODELS[provider], "--output-format", "stream-json",
                            "--allowed-tools", "WebSearch"],
                           cwd=git_repo, env=server.env(provider))
        requests = server.model_requests
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert_stream_json_shape(lines)
    assert "WebSearch" in lines[0]["tools"]
    offered = json.dumps(requests[0].body)
    assert '"WebSearch"' in offered
    # The tool result, in stream-json and in what the model was sent next.
    result = next(b for line in lines if line["type"] == "user"
                  for b in line["message"]["content"] if b["type"] == "tool_result")
    text = result["content"] if isinstance(result["content"], str) else json.dumps(
        result["content"])
    assert result["is_error"] is False
    assert "Python 3.14.0 was released on 7 October 2025. [1]" in text
    assert "Sources:" in text
    shown_urls = [h.url for h in HITS] if provider != "google" else ["vertexaisearch"]
    for url in shown_urls:
        assert url in text
    assert "vertexaisearch" in json.dumps(requests[2].body) if provider == "google" else (
        HITS[0].url in json.dumps(requests[2].body))
    assert lines[-1]["result"] == FINAL
