"""The model catalogue: lists and limits from each provider's models endpoint (the fake
server's recorded answers, fetched through the real SDKs and cached under AISTACK_HOME),
prices from genai-prices, deprecations from the SDKs with a date and a replacement, and
current defaults."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

import pytest

from aistack_tui.llm.catalogue import (
    DEFAULT_MODELS,
    available_models,
    configured_providers,
    deprecation_warning,
    provider_catalogue,
)
from aistack_tui.llm.deprecations import replacement_for
from aistack_tui.llm.model_info import lookup_model
from aistack_tui.llm.models_cache import cache_path, read_cache, read_listing
from aistack_tui.llm.models_endpoint import refresh, start_background_refresh
from aistack_tui.llm.prices import lookup_price
from aistack_tui.llm.registry import ProviderConfig, resolve_provider_config
from aistack_tui.llm.sdk_models import (
    parse_openai_deprecations,
    parse_written_date,
    sdk_deprecations,
    sdk_models,
)
from tests.fakes.fake_llm import FakeLLMServer
from tests.fakes.fake_models import ANTHROPIC_MODELS

BEFORE_SHUTDOWN = date(2026, 11, 25)


def config_for(server: FakeLLMServer, name: str) -> ProviderConfig:
    return resolve_provider_config(name, env=server.env(name))  # type: ignore[arg-type]


def ids(provider: str, home: Path) -> list[str]:
    return [e.model for e in provider_catalogue(provider, home=home).entries]


# ------------------------------------------------------------- endpoint answers, cached


async def test_recorded_anthropic_answer_gives_list_limits_and_lifecycle(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    assert await refresh([config_for(fake, "anthropic")], aistack_home) == {}
    catalogue = provider_catalogue("anthropic", home=aistack_home)
    assert catalogue.source == "models endpoint"
    assert [e.model for e in catalogue.entries][0] == DEFAULT_MODELS["anthropic"]
    assert {e.model for e in catalogue.entries} == {m["id"] for m in ANTHROPIC_MODELS}
    sonnet = next(e for e in catalogue.entries if e.model == "claude-sonnet-5-5")
    # The endpoint's max_tokens, not the family default an offline lookup would use.
    assert sonnet.info.max_output_tokens == 128_000
    assert lookup_model("anthropic", "claude-sonnet-5-5").max_output_tokens == 32_000
    assert sonnet.info.input_price == 2.0 and sonnet.display_name == "Claude Sonnet 5.5"
    old = catalogue.entries[-1]
    assert old.model == "claude-sonnet-4-5-20250929"
    assert old.deprecation is not None
    assert old.deprecation.shutdown_date == "2026-11-30"
    assert old.deprecation.replacement == "anthropic/claude-sonnet-5-5"
    assert "anthropic models endpoint" in old.deprecation.source
    assert [r.path for r in fake.requests] == ["/v1/models"]
    assert fake.requests[0].query == {"limit": "1000"}


async def test_recorded_openai_answer_drops_non_chat_models(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    await refresh([config_for(fake, "openai")], aistack_home)
    listed = ids("openai", aistack_home)
    assert listed[0] == DEFAULT_MODELS["openai"]
    assert "gpt-6.2-sol" in listed and "gpt-5.5" in listed
    assert "gpt-5.5-2026-04-23" not in listed, "a dated snapshot of a listed alias"
    for other in ("whisper-1", "tts-1", "dall-e-3", "gpt-image-1", "text-embedding-3-large",
                  "omni-moderation-latest", "gpt-realtime"):
        assert other not in listed
    entries = {e.model: e for e in provider_catalogue("openai", home=aistack_home).entries}
    assert entries["gpt-4.1"].deprecation is not None
    assert entries["gpt-4.1"].deprecation.shutdown_date == "2027-01-14"
    assert entries["gpt-6.1-sol"].deprecation is None
    # OpenAI's endpoint says no limits: they come from the built-in table and genai-prices.
    assert entries["gpt-6.1-sol"].info.context_window == 1_050_000


async def test_recorded_gemini_answer_gives_token_limits(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    await refresh([config_for(fake, "google")], aistack_home)
    listed = ids("google", aistack_home)
    assert listed[0] == "gemini-4-argon"
    for other in ("gemini-embedding-001", "imagen-4.0-generate-001", "gemini-3.8-flash-tts"):
        assert other not in listed
    assert "gemma-4-31b-it" in listed
    argon = lookup_model("google", "gemini-4-argon", home=aistack_home)
    assert (argon.context_window, argon.max_output_tokens) == (1_048_576, 131_072)
    carbon = lookup_model("google", "gemini-4-carbon", home=aistack_home)
    assert carbon.context_window == 2_097_152 and carbon.input_price is None
    flash = next(e for e in provider_catalogue("google", home=aistack_home).entries
                 if e.model == "gemini-2.0-flash")
    assert flash.deprecation is not None and flash.deprecation.source == "genai-prices"
    assert flash.deprecation.replacement == "google/gemini-3.8-flash"


async def test_settings_override_beats_the_endpoint(fake: FakeLLMServer,
                                                    aistack_home: Path) -> None:
    await refresh([config_for(fake, "anthropic")], aistack_home)
    overrides = {"anthropic/claude-sonnet-5-5": {"max_output_tokens": 4096}}
    info = lookup_model("anthropic", "claude-sonnet-5-5", overrides, home=aistack_home)
    assert info.max_output_tokens == 4096
    assert info.context_window == 1_000_000


async def test_fresh_cache_is_not_fetched_again_until_forced_or_moved(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    config = config_for(fake, "openai")
    await refresh([config], aistack_home)
    await refresh([config], aistack_home)
    assert len(fake.requests) == 1
    await refresh([config], aistack_home, ttl=0)
    assert len(fake.requests) == 2
    await refresh([config], aistack_home, force=True)
    assert len(fake.requests) == 3
    moved = ProviderConfig(config.name, config.kind, config.api_key, f"{config.base_url}/",
                           config.key_env_vars, config.needs_key)
    await refresh([moved], aistack_home)
    assert len(fake.requests) == 4
    listing = read_listing(aistack_home, "openai")
    assert listing is not None and listing.base_url == moved.base_url


async def test_failing_endpoint_keeps_the_last_answer(fake: FakeLLMServer,
                                                      aistack_home: Path) -> None:
    good = config_for(fake, "anthropic")
    await refresh([good], aistack_home)
    before = read_listing(aistack_home, "anthropic")
    with FakeLLMServer() as gone:
        dead_url = gone.url
    down = ProviderConfig("anthropic", "anthropic", "k", dead_url, (), True)
    errors = await refresh([down], aistack_home, force=True, timeout=2)
    assert set(errors) == {"anthropic"} and "Connection" in errors["anthropic"]
    assert read_listing(aistack_home, "anthropic") == before


async def test_provider_without_key_is_not_asked(fake: FakeLLMServer,
                                                 aistack_home: Path) -> None:
    keyless = ProviderConfig("openai", "openai", "", fake.url + "/v1", ("OPENAI_API_KEY",), True)
    assert await refresh([keyless], aistack_home) == {}, "a provider without a key is not asked"
    assert fake.requests == []
    assert read_cache(aistack_home) == {}


def test_background_refresh_runs_on_its_own_thread(fake: FakeLLMServer,
                                                   aistack_home: Path) -> None:
    configs = [config_for(fake, name) for name in ("anthropic", "openai", "google")]
    thread = start_background_refresh(configs, aistack_home)
    assert isinstance(thread, threading.Thread) and thread.daemon
    thread.join(30)
    assert set(read_cache(aistack_home)) == {"anthropic", "openai", "google"}
    assert start_background_refresh(configs, aistack_home) is None, "all fresh now"


def test_a_hanging_endpoint_never_holds_up_the_caller(aistack_home: Path) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        config = ProviderConfig("anthropic", "anthropic", "k", url, (), True)
        started = time.perf_counter()
        thread = start_background_refresh([config], aistack_home)
        assert time.perf_counter() - started < 0.5
        assert thread is not None and thread.is_alive()
        assert ids("anthropic", aistack_home)[0] == DEFAULT_MODELS["anthropic"]
    thread.join(30)  # the closed socket ends the fetch
    assert not thread.is_alive()
    assert read_cache(aistack_home) == {}


def test_damaged_cache_reads_as_empty_and_is_rewritten(fake: FakeLLMServer,
                                                       aistack_home: Path) -> None:
    path = cache_path(aistack_home)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert read_cache(aistack_home) == {}
    assert ids("anthropic", aistack_home)[0] == DEFAULT_MODELS["anthropic"]  # SDK list
    thread = start_background_refresh([config_for(fake, "anthropic")], aistack_home)
    assert thread is not None
    thread.join(30)
    assert "anthropic" in read_cache(aistack_home)
    assert [p.name for p in path.parent.iterdir()] == ["models.json"], "no temp file left"


# ------------------------------------------------------------- offline catalogue


def test_importing_the_catalogue_loads_no_sdk_and_no_price_data() -> None:
    """DEFAULT_MODELS is read on every start: it must not cost an SDK import."""
    code = (
        "import sys; from aistack_tui.llm.catalogue import DEFAULT_MODELS; "
        "bad = [m for m in ('anthropic', 'openai', 'google.genai', 'genai_prices') "
        "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_offline_catalogue_comes_from_the_sdk_type_lists(aistack_home: Path) -> None:
    for provider in ("anthropic", "openai", "google"):
        catalogue = provider_catalogue(provider, home=aistack_home)
        assert catalogue.source == f"{provider} SDK"
        listed = [e.model for e in catalogue.entries]
        assert listed[0] == DEFAULT_MODELS[provider]
        assert set(listed) <= set(sdk_models(provider))
    assert "gemini-3.1-flash-tts-preview" not in ids("google", aistack_home)
    assert "claude-sonnet-4-5-20250929" not in ids("anthropic", aistack_home)


def test_vendor_without_sdk_list_falls_back_to_the_built_in_table() -> None:
    catalogue = provider_catalogue("deepseek")
    assert catalogue.source == "built-in table"
    assert [e.model for e in catalogue.entries] == ["deepseek-chat", "deepseek-reasoner"]


@pytest.mark.parametrize("provider", sorted(DEFAULT_MODELS))
def test_defaults_are_current_listed_and_priced(provider: str) -> None:
    model = DEFAULT_MODELS[provider]
    assert model in sdk_models(provider), "the installed SDK names it"
    assert deprecation_warning(f"{provider}/{model}") is None, "no source deprecates it"
    priced = lookup_price(provider, model)
    assert priced is not None and priced.input_price and priced.output_price


# ------------------------------------------------------------- deprecation warnings


def test_warning_for_the_old_anthropic_default_names_date_and_replacement() -> None:
    text = deprecation_warning("anthropic/claude-sonnet-4-5", today=BEFORE_SHUTDOWN)
    assert text == (
        "anthropic/claude-sonnet-4-5 is deprecated: Anthropic shuts it down on 2026-11-30. "
        "Switch to anthropic/claude-sonnet-5-5 (--model, /model or the `model` setting)."
    )
    dated = deprecation_warning("anthropic/claude-sonnet-4-5-20250929", today=BEFORE_SHUTDOWN)
    assert dated is not None and "2026-11-30" in dated


def test_warning_after_the_date_says_requests_may_fail() -> None:
    text = deprecation_warning("anthropic/claude-sonnet-4-5", today=date(2026, 12, 1))
    assert text is not None
    assert "was shut down on 2026-11-30: requests to it may fail" in text


@pytest.mark.parametrize(
    ("model", "shutdown", "replacement"),
    [
        ("openai/gpt-4.1", "2027-01-14", "openai/gpt-5.5"),
        ("openai/gpt-5-mini", "2026-12-11", "openai/gpt-5.4-mini"),
        ("openai/o3", "2026-12-11", "openai/gpt-6.1-sol"),
        ("anthropic/claude-opus-4-5", "2027-01-22", "anthropic/claude-opus-5-5"),
        ("anthropic/claude-mythos-preview", "2026-06-30", "anthropic/claude-mythos-5-2"),
    ],
)
def test_sdk_deprecations_name_date_and_replacement(model: str, shutdown: str,
                                                   replacement: str) -> None:
    text = deprecation_warning(model, today=BEFORE_SHUTDOWN)
    assert text is not None
    assert shutdown in text and f"Switch to {replacement} " in text


def test_google_deprecation_has_no_date() -> None:
    text = deprecation_warning("google/gemini-2.0-flash")
    assert text is not None
    assert "no shutdown date announced" in text and "google/gemini-3.8-flash" in text


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-5-5", "ollama/qwen2.5-coder",
                                   "openai/not-a-model", "nonsense"])
def test_current_unknown_or_invalid_models_get_no_warning(model: str) -> None:
    assert deprecation_warning(model) is None


async def test_retired_model_from_the_endpoint(fake: FakeLLMServer, aistack_home: Path) -> None:
    entries = [dict(m) for m in ANTHROPIC_MODELS]
    entries[-1] = {**entries[-1], "lifecycle": "retired"}
    fake.set_models("anthropic", entries)
    await refresh([config_for(fake, "anthropic")], aistack_home)
    text = deprecation_warning("anthropic/claude-sonnet-4-5", home=aistack_home)
    assert text is not None and text.startswith(
        "anthropic/claude-sonnet-4-5 has been retired by Anthropic: requests to it fail.")
    assert "claude-sonnet-4-5-20250929" not in ids("anthropic", aistack_home)


def test_sdk_deprecation_data_is_read() -> None:
    anthropic_table = sdk_deprecations("anthropic")
    assert anthropic_table["claude-sonnet-4-5"] == "2026-11-30"
    openai_table = sdk_deprecations("openai")
    assert openai_table["gpt-4.1"] == "2027-01-14"
    assert "gpt-6.1-sol" not in openai_table
    assert sdk_deprecations("google") == {}


def test_openai_docstring_parser() -> None:
    doc = '''Deprecated values:

- "gpt-a", "gpt-b-2025-01-01": Announced shutdown
  date: 2026-12-11. See https://example/deprecations for details.
- "gpt-c": Not a supported model ID. Retained for SDK compatibility.
'''
    assert parse_openai_deprecations(doc) == {
        "gpt-a": "2026-12-11", "gpt-b-2025-01-01": "2026-12-11", "gpt-c": None}
    assert parse_openai_deprecations("no list here") == {}


@pytest.mark.parametrize(("text", "iso"), [("November 30th, 2026", "2026-11-30"),
                                           ("June 1st, 2027", "2027-06-01"),
                                           ("sometime", None), ("Smarch 3, 2026", None)])
def test_written_dates(text: str, iso: str | None) -> None:
    assert parse_written_date(text) == iso


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-5"),
        ("claude-3-5-sonnet", "claude-sonnet-5"),
        ("gpt-4.1-mini", "gpt-5-mini"),
        ("gemini-2.0-flash", "gemini-3-flash"),
        ("gpt-4o", "DEFAULT"),
        ("gemini-3-flash", "DEFAULT"),
    ],
)
def test_replacement_is_the_newest_current_model_of_the_line(model: str, expected: str) -> None:
    candidates = ["claude-sonnet-5", "claude-sonnet-4-9-20260101", "claude-opus-5",
                  "claude-sonnet-6-preview", "gpt-5-mini", "gpt-6-mini", "gemini-3-flash",
                  "gemini-2.5-flash", "DEFAULT"]
    deprecated = {"gpt-6-mini"}
    assert replacement_for(model, candidates, deprecated, "DEFAULT") == expected


# ------------------------------------------------------------- picker and providers


async def test_available_models_offers_current_models_of_configured_providers(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    env = {**fake.env("anthropic"), **fake.env("openai")}
    configs = configured_providers({}, env, current="anthropic/claude-sonnet-4-5")
    assert [c.name for c in configs] == ["anthropic", "openai"]
    await refresh(configs, aistack_home)
    models = available_models(configs, home=aistack_home,
                              current="anthropic/claude-sonnet-4-5")
    assert models[:2] == ["anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-5-5"]
    assert "openai/gpt-6.1-sol" in models and "anthropic/claude-opus-5-5" in models
    assert "openai/gpt-4.1" not in models, "deprecated models are not offered"
    assert not any(m.startswith("google/") for m in models), "no key, not configured"


def test_configured_providers_include_declared_and_current_ones() -> None:
    custom = {"work": {"type": "openai-compatible", "base_url": "http://127.0.0.1:9/v1"}}
    configs = configured_providers(custom, {"GEMINI_API_KEY": "g"}, current="ollama/qwen")
    assert [c.name for c in configs] == ["google", "ollama", "work"]


def test_one_damaged_provider_entry_in_the_cache_hides_only_itself(aistack_home: Path) -> None:
    import json

    from aistack_tui.llm.models_cache import CACHE_VERSION

    path = cache_path(aistack_home)
    path.parent.mkdir(parents=True)
    good = {"fetched_at": 1.0, "base_url": None, "models": [{"id": "m-1", "context_window": 9}]}
    path.write_text(json.dumps({"version": CACHE_VERSION, "providers": {
        "openai": good,
        "google": {"fetched_at": "soon", "base_url": None, "models": []},
        "anthropic": {"fetched_at": 1.0, "base_url": None, "models": ["not an object"]},
        "groq": {"fetched_at": 1.0, "base_url": None},
        "xai": {"fetched_at": 1.0, "base_url": None, "models": [{"context_window": 5}]},
        "deepseek": [1, 2],
    }}))
    listings = read_cache(aistack_home)
    assert list(listings) == ["openai"]
    assert [(m.id, m.context_window) for m in listings["openai"].models] == [("m-1", 9)]
