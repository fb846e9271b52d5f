"""Context windows, output limits and prices of models, and what a response costs.

Each value comes from the best source that knows it: settings `models` always win; then
the provider's models endpoint as cached (limits, where Anthropic and Gemini say them);
then `BUILT_IN`, so a fresh offline machine budgets the current models right; then
genai-prices (prices in USD per million tokens, long-context tiers, context windows, a
deprecated flag), whose data ships inside the package, so a lookup never touches the
network; then family limits, then conservative defaults, so budgeting stays safe and an
unknown price (local providers, custom endpoints) shows as unknown, not as zero.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aistack_tui.llm.models_endpoint import ProviderListing, undated
from aistack_tui.llm.registry import canonical_name
from aistack_tui.llm.types import Usage

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo as PricesEntry
    from genai_prices.types import ModelPrice

_PRICED = {"anthropic", "openai", "google", "deepseek", "openrouter"}
"""The providers genai-prices prices, by their (canonical) name, which is also its id."""
_KEYS = {"input_price": "input_mtok", "output_price": "output_mtok",
         "cache_read_price": "cache_read_mtok", "cache_write_price": "cache_write_mtok"}
"""Our price fields (USD per million tokens), by genai-prices' names for them."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model's limits, and its prices in USD per million tokens (None: unknown)."""

    context_window: int
    max_output_tokens: int
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    price_tiers: tuple[ModelInfo, ...] = ()
    """The model as priced for a request whose input exceeds the tier's
    `above_input_tokens` (long-context pricing): the "cliff" every provider uses, where
    the whole request pays the tier's prices. A tier sets every price, not only those
    that change."""
    above_input_tokens: int = 0
    """Where a tier starts (0 for the model's base prices)."""


DEFAULT_INFO = ModelInfo(context_window=32_000, max_output_tokens=4096)
"""For unknown models: small enough that compaction starts early rather than too late."""

BUILT_IN: dict[str, dict[str, ModelInfo]] = {
    "anthropic": {"claude-sonnet-5-5": ModelInfo(1_000_000, 128_000),
                  "claude-opus-5-5": ModelInfo(1_000_000, 128_000),
                  "claude-haiku-5-5": ModelInfo(1_000_000, 64_000)},
    "openai": {"gpt-6.1-sol": ModelInfo(1_050_000, 128_000)},
    "google": {"gemini-4-argon": ModelInfo(1_048_576, 131_072)},
    "deepseek": {"deepseek-chat": ModelInfo(128_000, 8_192),
                 "deepseek-reasoner": ModelInfo(128_000, 64_000)},
}
"""The offline model list of each vendor (`llm/catalogue.py`): its default, and for
Anthropic the newest of each line, which `sonnet`, `opus` and `haiku` name; with the limits
no offline source knows (genai-prices has no max output; it ships the prices)."""

_FAMILIES = (
    ("claude-", ModelInfo(200_000, 32_000)), ("gemini-", ModelInfo(1_048_576, 8_192)),
    ("gpt-4.1", ModelInfo(1_047_576, 32_768)), ("gpt-4o", ModelInfo(128_000, 16_384)),
    ("gpt-5", ModelInfo(400_000, 128_000)), ("gpt-6", ModelInfo(400_000, 128_000)),
    ("o3", ModelInfo(200_000, 100_000)), ("o4", ModelInfo(200_000, 100_000)),
    ("deepseek-", ModelInfo(128_000, 8_192)),
)
"""Limits every model of a family has at least, for models no source describes, of the
vendors genai-prices knows (routers name models `vendor/model`: the last part counts)."""


def lookup_model(provider: str, model: str,
                 overrides: Mapping[str, Mapping[str, Any]] | None = None, *,
                 listing: ProviderListing | None = None) -> ModelInfo:
    """The model's info from every source that knows it (see the module docstring), the
    settings override for `provider/model` merged over it last. `listing` is the
    provider's cached models-endpoint answer; `overrides` are settings `models` as
    validated there (`ModelOverride`).
    """
    vendor = canonical_name(provider)  # `gemini` is `google`
    name = model.lower().removeprefix("models/")
    own = BUILT_IN.get(vendor, {}).get(undated(name))
    last = name.rsplit("/", 1)[-1]
    family = next((i for prefix, i in _FAMILIES if last.startswith(prefix)), None)
    info = own or (family if vendor in _PRICED else None) or DEFAULT_INFO
    entry = prices_entry(vendor, name)
    if entry is not None:
        prices = _prices_now(entry)
        starts = sorted({t.start for key in _KEYS.values()
                         for t in getattr(getattr(prices, key), "tiers", ())})
        # A built-in window wins: genai-prices' is at times what a beta header unlocks.
        window = info.context_window if own else entry.context_window or info.context_window
        info = replace(info, context_window=window, **_prices_above(prices, 0))
        info = replace(info, price_tiers=tuple(
            replace(info, above_input_tokens=s, **_prices_above(prices, s)) for s in starts))
    listed = listing.find(model) if listing is not None else None
    if listed is not None:
        info = replace(info, context_window=listed.context_window or info.context_window,
                       max_output_tokens=listed.max_output_tokens or info.max_output_tokens)
    override = next((overrides[key] for key in (f"{provider}/{model}", f"{vendor}/{model}")
                     if overrides and key in overrides), None)
    if not override:
        return info
    if any(key.endswith("_price") for key in override):
        info = replace(info, price_tiers=())  # your own price replaces the provider's tiers
    return replace(info, **{k: v for k, v in override.items()
                            if v is not None or k.endswith("_price")})


@functools.lru_cache(maxsize=512)
def prices_entry(provider: str, model: str) -> PricesEntry | None:
    """genai-prices' entry for `provider/model` (its prices, context window and
    deprecated flag), or None. Matching is genai-prices' own (dated snapshots, `-latest`
    aliases, OpenRouter's `vendor/model` names)."""
    provider_id = canonical_name(provider)
    if provider_id not in _PRICED:
        return None
    from genai_prices import data_snapshot

    try:
        return data_snapshot.get_snapshot().find_provider_model(
            model.lower().removeprefix("models/"), None, provider_id, None)[1]
    except LookupError:
        return None


def _prices_now(entry: PricesEntry) -> ModelPrice:
    """The prices in force today, as genai-prices chooses them (a conditional price
    applies from its start date on), except that a time-of-day price (DeepSeek's peak
    hours) counts as always in force, so the cost and the budget stop never rely on an
    off-peak discount."""
    from genai_prices.types import TimeOfDateConstraint

    if isinstance(entry.prices, list):
        entry = replace(entry, prices=[
            replace(c, constraint=None) if isinstance(c.constraint, TimeOfDateConstraint)
            else c for c in entry.prices])
    return entry.get_prices(datetime.now(tz=UTC))


def _prices_above(prices: ModelPrice, start: int) -> dict[str, float | None]:
    """Our price fields for a request of just over `start` input tokens: a tiered price's
    highest tier at or below `start`, else its base (genai-prices' own rule)."""
    from genai_prices.types import calc_unit_price

    return {field: None if (price := getattr(prices, key)) is None
            else float(calc_unit_price(price, 1, start + 1, 1)) for field, key in _KEYS.items()}


def cost_usd(info: ModelInfo, usage: Usage) -> float | None:
    """The cost of one response's `usage` in USD, or None when the model's prices are
    unknown.

    Cache prices default to the input price when only that is known. A long-context tier
    applies to the whole request once its input (uncached, cache reads and cache writes
    together) exceeds the tier's threshold, as the providers bill it.
    """
    total_input = (usage.input_tokens + usage.cache_read_input_tokens
                   + usage.cache_creation_input_tokens)
    # Each tier holds every price in force above its threshold, so one of them suffices.
    p = next((t for t in reversed(info.price_tiers) if total_input > t.above_input_tokens), info)
    if p.input_price is None or p.output_price is None:
        return None
    cache_read = p.input_price if p.cache_read_price is None else p.cache_read_price
    cache_write = p.input_price if p.cache_write_price is None else p.cache_write_price
    return (usage.input_tokens * p.input_price + usage.output_tokens * p.output_price
            + usage.cache_read_input_tokens * cache_read
            + usage.cache_creation_input_tokens * cache_write) / 1_000_000
