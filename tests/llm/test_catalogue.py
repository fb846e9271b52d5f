"""The model catalogue: lists and limits from each provider's models endpoint (the fake
server's recorded answers, fetched through the real SDKs and cached under AISTACK_HOME),
prices and the deprecated flag from genai-prices, deprecations with a date and a
replacement from the endpoints' lifecycle fields, and a built-in list of the current
defaults for a machine no endpoint has answered yet."""

from __future__ import annotations

import os
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
    deprecation_warning,
    provider_catalogue,
    replacement_for,
)
from aistack_tui.llm.model_info import BUILT_IN, lookup_model, prices_entry
from aistack_tui.llm.models_endpoint import (
    CACHE_VERSION,
    cache_path,
    read_cache,
    read_listing,
    refresh,
    start_background_refresh,
)
from aistack_tui.llm.registry import ProviderConfig, resolve_provider_config
from aistack_tui.session.config import make_run_config
from aistack_tui.session.providers import picker_models, provider_configs
from fakes.fake_llm import FakeLLMServer
from fakes.fake_models import ANTHROPIC_MODELS
from tests.e2e.helpers import write_user_settings

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
    assert sonnet.info.max_output_tokens == 128_000
    # The endpoint's max_tokens, not the family default an offline lookup would use.
    opus = next(e for e in catalogue.entries if e.model == "claude-opus-4-8")
    assert opus.info.max_output_tokens == 128_000
    assert lookup_model("anthropic", "claude-opus-4-8").max_output_tokens == 32_000
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
    # OpenAI's endpoint says no limits: they come from the built-in list and genai-prices.
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
    argon = lookup_model("google", "gemini-4-argon",
                         listing=read_listing(aistack_home, "google"))
    assert (argon.context_window, argon.max_output_tokens) == (1_048_576, 131_072)
    carbon = lookup_model("google", "gemini-4-carbon",
                         listing=read_listing(aistack_home, "google"))
    assert carbon.context_window == 2_097_152 and carbon.input_price is None
    flash = next(e for e in provider_catalogue("google", home=aistack_home).entries
                 if e.model == "gemini-2.0-flash")
    assert flash.deprecation is not None and flash.deprecation.source == "genai-prices"
    assert flash.deprecation.replacement == "google/gemini-3.8-flash"


async def test_settings_override_beats_the_endpoint(fake: FakeLLMServer,
                                                    aistack_home: Path) -> None:
    await refresh([config_for(fake, "anthropic")], aistack_home)
    overrides = {"anthropic/claude-sonnet-5-5": {"max_output_tokens": 4096}}
    info = lookup_model("anthropic", "claude-sonnet-5-5", overrides,
                         listing=read_listing(aistack_home, "anthropic"))
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
    assert ids("anthropic", aistack_home)[0] == DEFAULT_MODELS["anthropic"]  # built-in
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


def test_the_catalogue_and_the_start_check_import_no_sdk(aistack_home: Path) -> None:
    """Lists, limits, prices and deprecations come from the cache and genai-prices: no
    SDK module (private or public) is read to build them, so an SDK release cannot
    break them and a session start does not pay for an SDK import."""
    code = (
        "import sys; from pathlib import Path; "
        "from aistack_tui.llm.catalogue import provider_catalogue, deprecation_warning; "
        "[provider_catalogue(p, home=Path(sys.argv[1])) for p in "
        "('anthropic', 'openai', 'google', 'deepseek')]; "
        "deprecation_warning('google/gemini-2.0-flash', home=Path(sys.argv[1])); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai') "
        "or m.startswith('google.genai')]; print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(aistack_home)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_offline_catalogue_is_the_built_in_list_of_current_models(aistack_home: Path) -> None:
    for provider in ("anthropic", "openai", "google"):
        catalogue = provider_catalogue(provider, home=aistack_home)
        assert catalogue.source == "built-in table" and catalogue.fetched_at is None
        assert [e.model for e in catalogue.entries] == [*BUILT_IN[provider]]
        assert catalogue.entries[0].is_default
        for entry in catalogue.entries:
            assert entry.deprecation is None
            assert entry.info == lookup_model(provider, entry.model)
            assert entry.info.input_price and entry.info.output_price, "genai-prices"
    assert ids("anthropic", aistack_home) == [
        "claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"]


def test_vendor_without_a_cached_answer_falls_back_to_the_built_in_table() -> None:
    catalogue = provider_catalogue("deepseek")
    assert catalogue.source == "built-in table"
    assert [e.model for e in catalogue.entries] == ["deepseek-chat", "deepseek-reasoner"]
    assert provider_catalogue("vllm").entries == ()


@pytest.mark.parametrize("provider", sorted(DEFAULT_MODELS))
async def test_defaults_are_current_listed_and_priced(
    provider: str, fake: FakeLLMServer, aistack_home: Path
) -> None:
    """Fails when a provider's list (as recorded from the real endpoint) or genai-prices
    marks a default deprecated: time to choose a new one."""
    model = DEFAULT_MODELS[provider]
    assert model in BUILT_IN[provider], "the offline list has it, with its limits"
    info = lookup_model(provider, model)
    assert info.input_price and info.output_price
    entry = prices_entry(provider, model)
    assert entry is not None and not entry.deprecated
    assert deprecation_warning(f"{provider}/{model}") is None
    await refresh([config_for(fake, provider)], aistack_home)
    assert ids(provider, aistack_home)[0] == model, "the endpoint lists it"
    assert deprecation_warning(f"{provider}/{model}", home=aistack_home) is None


# ------------------------------------------------------------- deprecation warnings


async def test_warning_for_the_old_anthropic_default_names_date_and_replacement(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    await refresh([config_for(fake, "anthropic")], aistack_home)
    text = deprecation_warning("anthropic/claude-sonnet-4-5", home=aistack_home,
                               today=BEFORE_SHUTDOWN)
    assert text == (
        "anthropic/claude-sonnet-4-5 is deprecated: Anthropic shuts it down on 2026-11-30. "
        "Switch to anthropic/claude-sonnet-5-5 (--model, /model or the `model` setting)."
    )
    dated = deprecation_warning("anthropic/claude-sonnet-4-5-20250929", home=aistack_home,
                                today=BEFORE_SHUTDOWN)
    assert dated is not None and "2026-11-30" in dated
    after = deprecation_warning("anthropic/claude-sonnet-4-5", home=aistack_home,
                                today=date(2026, 12, 1))
    assert after is not None
    assert "was shut down on 2026-11-30: requests to it may fail" in after


@pytest.mark.parametrize(
    ("model", "shutdown", "replacement"),
    [
        ("openai/gpt-4.1", "2027-01-14", "openai/gpt-5.5"),
        ("openai/gpt-5", "2026-12-11", "openai/gpt-5.5"),
        ("openai/o3", "2026-12-11", "openai/gpt-6.1-sol"),
        ("openai/gpt-5.4-nano", "2027-04-01", "openai/gpt-6.1-sol"),
        ("anthropic/claude-opus-4-5", "2027-01-22", "anthropic/claude-opus-5-5"),
    ],
)
async def test_endpoint_deprecations_name_date_and_replacement(
    model: str, shutdown: str, replacement: str, fake: FakeLLMServer, aistack_home: Path
) -> None:
    await refresh([config_for(fake, model.split("/")[0])], aistack_home)
    text = deprecation_warning(model, home=aistack_home, today=BEFORE_SHUTDOWN)
    assert text is not None
    assert shutdown in text and f"Switch to {replacement} " in text
    assert deprecation_warning(model, today=BEFORE_SHUTDOWN) is None, (
        "genai-prices does not mark it: without the endpoint's answer nothing does")


async def test_google_deprecation_comes_from_genai_prices_without_a_date(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    text = deprecation_warning("google/gemini-2.0-flash")
    assert text is not None
    assert "no shutdown date announced" in text and "Switch to google/gemini-4-argon " in text
    await refresh([config_for(fake, "google")], aistack_home)
    listed = deprecation_warning("gemini/gemini-2.0-flash", home=aistack_home)
    assert listed is not None and "Switch to google/gemini-3.8-flash " in listed


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


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-5"),
        ("gpt-4.1-mini", "gpt-5-mini"),
        ("gemini-2.0-flash", "gemini-3-flash"),
        ("gpt-4o", "DEFAULT"),
        ("gemini-3-flash", "DEFAULT"),
        ("DEFAULT", None),
    ],
)
def test_replacement_is_the_newest_current_model_of_the_line(model: str,
                                                             expected: str | None) -> None:
    current = ["claude-sonnet-5", "claude-sonnet-4-9-20260101", "claude-opus-5",
               "claude-sonnet-6-preview", "gpt-5-mini", "gemini-3-flash", "gemini-2.5-flash",
               "DEFAULT"]
    assert replacement_for(model, current, "DEFAULT") == expected


# ------------------------------------------------------------- picker and providers


async def test_the_picker_offers_current_models_of_configured_providers(
    fake: FakeLLMServer, aistack_home: Path
) -> None:
    env = {**os.environ, **fake.env("anthropic"), **fake.env("openai")}
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env.pop(name, None)
    config = make_run_config(env=env)
    configs = provider_configs(config, "anthropic/claude-sonnet-4-5")
    assert [c.name for c in configs] == ["anthropic", "openai"]
    await refresh(configs, aistack_home)
    models = picker_models(config, "anthropic/claude-sonnet-4-5")
    assert models[:2] == ["anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-5-5"]
    assert "openai/gpt-6.1-sol" in models and "anthropic/claude-opus-5-5" in models
    assert "openai/gpt-4.1" not in models, "deprecated models are not offered"
    assert not any(m.startswith("google/") for m in models), "no key, not configured"


def test_configured_providers_include_declared_and_current_ones(aistack_home: Path) -> None:
    write_user_settings(aistack_home, {"providers": {
        "work": {"type": "openai-compatible", "base_url": "http://127.0.0.1:9/v1"}}})
    env = {**os.environ, "GEMINI_API_KEY": "g"}
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        env.pop(name, None)
    configs = provider_configs(make_run_config(env=env), "ollama/qwen")
    assert [c.name for c in configs] == ["google", "ollama", "work"]


def test_one_damaged_provider_entry_in_the_cache_hides_only_itself(aistack_home: Path) -> None:
    import json

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
