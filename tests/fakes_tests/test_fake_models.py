"""The fake's models endpoints answer in each provider's wire shape: the installed SDKs
parse every recorded entry into their own types, with no field missing or unknown, and
page through the lists as they do against the real APIs."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from google import genai

from fakes.fake_llm import FakeLLMServer
from fakes.fake_models import ANTHROPIC_MODELS, GEMINI_MODELS, OPENAI_MODELS


def _fields(model: Any) -> set[str]:
    return set(type(model).model_fields)


def test_anthropic_entries_are_complete_sdk_model_infos() -> None:
    for entry in ANTHROPIC_MODELS:
        parsed = anthropic.types.ModelInfo.model_validate(entry)
        assert set(entry) == _fields(parsed), entry["id"]
        assert parsed.capabilities is not None
        assert parsed.lifecycle in ("active", "deprecated")


def test_openai_entries_are_sdk_models() -> None:
    for entry in OPENAI_MODELS:
        parsed = openai.types.Model.model_validate(entry)
        assert set(entry) <= _fields(parsed), entry["id"]


def test_anthropic_sdk_pages_through_the_list(fake_llm: FakeLLMServer) -> None:
    client = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0)
    ids = [m.id for m in client.models.list(limit=4)]
    assert ids == [m["id"] for m in ANTHROPIC_MODELS]
    pages = [r for r in fake_llm.requests if r.path == "/v1/models"]
    assert len(pages) == 3
    assert pages[1].query == {"limit": "4", "after_id": ANTHROPIC_MODELS[3]["id"]}
    assert all(r.format == "anthropic" for r in pages)
    sonnet = next(m for m in client.models.list(limit=100) if m.id.startswith("claude-sonnet-4-5"))
    assert sonnet.lifecycle == "deprecated"
    assert sonnet.retires_at is not None and sonnet.retires_at.date().isoformat() == "2026-11-30"
    assert fake_llm.model_requests == []


def test_openai_lists_shutdown_dates(fake_llm: FakeLLMServer) -> None:
    client = openai.OpenAI(base_url=fake_llm.url + "/v1", api_key="k", max_retries=0)
    models = {m.id: m for m in client.models.list()}
    assert models["gpt-4.1"].shutdown_date == "2027-01-14"
    assert models["gpt-6.1-sol"].shutdown_date is None
    assert fake_llm.requests[-1].format == "openai"


@pytest.mark.parametrize("api_version", ["v1beta", "v1"])
def test_gemini_sdk_pages_through_models_list(fake_llm: FakeLLMServer, api_version: str) -> None:
    client = genai.Client(api_key="k", http_options={"base_url": fake_llm.url,
                                                    "api_version": api_version})
    models = list(client.models.list(config={"page_size": 5}))
    assert [m.name for m in models] == [m["name"] for m in GEMINI_MODELS]
    argon = next(m for m in models if m.name == "models/gemini-4-argon")
    assert (argon.input_token_limit, argon.output_token_limit) == (1_048_576, 131_072)
    assert argon.supported_actions is not None and "generateContent" in argon.supported_actions
    pages = [r for r in fake_llm.requests if r.format == "google"]
    assert len(pages) == 3
    assert pages[1].query.get("pageToken") == "5"


def test_set_models_replaces_one_list_until_reset(fake_llm: FakeLLMServer) -> None:
    fake_llm.set_models("openai", [{"id": "only-one", "object": "model", "created": 1,
                                    "owned_by": "me"}])
    client = openai.OpenAI(base_url=fake_llm.url + "/v1", api_key="k", max_retries=0)
    assert [m.id for m in client.models.list()] == ["only-one"]
    fake_llm.reset()
    assert "gpt-6.1-sol" in [m.id for m in client.models.list()]


def test_explicit_ids_are_listed_in_every_format() -> None:
    with FakeLLMServer(models=["m-1", "m-2"]) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
        assert [m.id for m in client.models.list()] == ["m-1", "m-2"]
