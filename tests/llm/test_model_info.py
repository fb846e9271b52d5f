"""Model limits come from the cached models endpoint, the built-in list of current models,
genai-prices' context windows and family limits; prices from genai-prices; settings
override all of them, and unknown models get conservative defaults with cost unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.llm.model_info import DEFAULT_INFO, ModelInfo, cost_usd, lookup_model
from aistack_tui.llm.types import Usage
from aistack_tui.session.config import make_run_config
from aistack_tui.settings.layers import ConfigError
from tests.e2e.helpers import write_user_settings


@pytest.mark.parametrize(
    ("provider", "model", "context", "price_in"),
    [
        ("anthropic", "claude-sonnet-4-5", 200_000, 3.0),
        ("anthropic", "claude-sonnet-4-5-20250929", 200_000, 3.0),
        ("anthropic", "claude-opus-4-1", 200_000, 15.0),
        ("anthropic", "claude-opus-4-5", 200_000, 5.0),
        ("anthropic", "claude-haiku-4-5", 200_000, 1.0),
        ("anthropic", "claude-3-7-sonnet-20250219", 200_000, 3.0),
        ("anthropic", "claude-3-5-haiku-latest", 200_000, 0.8),
        ("openai", "gpt-4.1", 1_000_000, 2.0),
        ("openai", "gpt-4.1-mini", 1_000_000, 0.4),
        ("openai", "gpt-4o-2024-08-06", 128_000, 2.5),
        ("openai", "gpt-4o-mini", 128_000, 0.15),
        ("openai", "o3", 200_000, 2.0),
        ("openai", "o4-mini", 200_000, 1.1),
        ("openai", "gpt-5", 400_000, 1.25),
        ("openai", "gpt-5-mini", 400_000, 0.25),
        ("google", "gemini-2.5-pro", 1_048_576, 1.25),
        ("gemini", "gemini-2.5-flash", 1_048_576, 0.30),
        ("google", "gemini-2.0-flash", 1_000_000, 0.10),
        ("deepseek", "deepseek-chat", 128_000, 0.27),  # genai-prices: peak-hour price
        ("openrouter", "anthropic/claude-sonnet-4.5", 1_000_000, 3.0),
    ],
)
def test_known_models_offline(provider: str, model: str, context: int, price_in: float) -> None:
    """Windows and prices from genai-prices (the built-in list's for deepseek), max output
    from family limits."""
    info = lookup_model(provider, model)
    assert info.context_window == context
    assert info.input_price == price_in
    assert info.output_price is not None
    assert info.max_output_tokens >= 8192


def test_unknown_model_gets_conservative_defaults() -> None:
    info = lookup_model("ollama", "qwen2.5-coder:7b")
    assert info == DEFAULT_INFO
    assert info.context_window == 32_000
    assert info.max_output_tokens == 4096
    assert cost_usd(info, Usage(input_tokens=1000)) is None


def test_newer_model_of_known_family_is_not_priced_like_an_older_one() -> None:
    info = lookup_model("anthropic", "claude-opus-4-9")
    assert info.context_window == 200_000
    assert info.input_price is None


def test_settings_override_merges_over_built_in_entry() -> None:
    overrides = {"anthropic/claude-sonnet-4-5": {"context_window": 1_000_000,
                                                 "input_price": 6}}
    info = lookup_model("anthropic", "claude-sonnet-4-5", overrides)
    assert info.context_window == 1_000_000
    assert info.input_price == 6.0
    assert info.output_price == 15.0, "fields not overridden keep the built-in value"


def test_settings_can_describe_an_unknown_model() -> None:
    overrides = {"ollama/qwen2.5-coder": {"context_window": 131072, "max_output_tokens": 8192,
                                          "input_price": 0, "output_price": 0}}
    info = lookup_model("ollama", "qwen2.5-coder", overrides)
    assert info == ModelInfo(131072, 8192, 0.0, 0.0)
    assert cost_usd(info, Usage(input_tokens=5000, output_tokens=100)) == 0.0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"context": 5}, r"context: Extra inputs"),
        ({"context_window": "big"}, r"context_window: Input should be a valid integer"),
        ({"max_output_tokens": 0}, r"max_output_tokens: Input should be greater than 0"),
        ({"input_price": -1}, r"input_price: Input should be greater than or equal to 0"),
        ({"output_price": True}, r"output_price: Input should be a valid number"),
    ],
)
def test_invalid_override_names_the_setting(aistack_home: Path, override: dict,
                                            message: str) -> None:
    write_user_settings(aistack_home, {"models": {"openai/gpt-4.1": override}})
    with pytest.raises(ConfigError, match=r"invalid setting models\.openai/gpt-4\.1\." + message):
        make_run_config()


def test_an_override_sets_only_what_it_names(aistack_home: Path) -> None:
    write_user_settings(aistack_home, {"models": {"openai/gpt-4.1": {
        "input_price": None, "max_output_tokens": 1000, "context_window": None}}})
    overrides = make_run_config().loaded.settings.model_overrides()
    info = lookup_model("openai", "gpt-4.1", overrides)
    assert (info.input_price, info.max_output_tokens) == (None, 1000)
    assert info.context_window == lookup_model("openai", "gpt-4.1").context_window
    assert info.output_price == lookup_model("openai", "gpt-4.1").output_price


def test_cost_counts_input_output_and_cache_at_their_prices() -> None:
    info = lookup_model("anthropic", "claude-sonnet-4-5")
    usage = Usage(input_tokens=100_000, output_tokens=10_000,
                  cache_read_input_tokens=60_000, cache_creation_input_tokens=20_000)
    # 0.30 (100k at 3.00) + 0.15 (10k at 15.00) + 0.018 (60k at 0.30) + 0.075 (20k at 3.75)
    assert cost_usd(info, usage) == pytest.approx(0.543)


def test_long_context_tier_prices_the_whole_request() -> None:
    info = lookup_model("anthropic", "claude-sonnet-4-5")
    assert [t.above_input_tokens for t in info.price_tiers] == [200_000]
    # 150k uncached + 60k cache reads = 210k input: every token at the tier's price.
    usage = Usage(input_tokens=150_000, output_tokens=10_000, cache_read_input_tokens=60_000)
    # 0.90 (150k at 6.00) + 0.225 (10k at 22.50) + 0.036 (60k at 0.60)
    assert cost_usd(info, usage) == pytest.approx(1.161)
    below = Usage(input_tokens=150_000, output_tokens=10_000)
    assert cost_usd(info, below) == pytest.approx(0.45 + 0.15)


def test_a_price_override_replaces_the_tiers_too() -> None:
    info = lookup_model("anthropic", "claude-sonnet-4-5",
                        {"anthropic/claude-sonnet-4-5": {"input_price": 1, "output_price": 2}})
    assert info.price_tiers == ()
    assert cost_usd(info, Usage(input_tokens=1_000_000)) == pytest.approx(1.0)


def test_cost_of_cache_defaults_to_input_price() -> None:
    info = ModelInfo(100_000, 4096, input_price=2.0, output_price=8.0)
    usage = Usage(input_tokens=500_000, cache_read_input_tokens=500_000, output_tokens=0)
    assert cost_usd(info, usage) == pytest.approx(2.0)


def test_the_built_in_list_gives_the_current_defaults_limits_offline() -> None:
    info = lookup_model("anthropic", "claude-sonnet-5-5")
    assert (info.context_window, info.max_output_tokens) == (1_000_000, 128_000)
    assert (info.input_price, info.output_price) == (2.0, 10.0), "genai-prices"
    google = lookup_model("gemini", "models/gemini-4-argon")
    assert (google.context_window, google.max_output_tokens) == (1_048_576, 131_072)
