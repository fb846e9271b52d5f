"""Context windows, output limits and prices of models, and what a response costs.

Compaction needs the context window, the request its max output tokens, the cost line
prices. Each value comes from the best source that knows it:

1. settings (`models: {"PROVIDER/MODEL": {...}}`), which always win;
2. the provider's models endpoint as cached (`llm/models_endpoint.py`): context window
   and max output where the provider says them (Anthropic, Gemini);
3. `BUILT_IN`, the limits of a few current models (each provider's default among them),
   so a fresh offline machine budgets them right before any endpoint has answered;
4. genai-prices (`llm/prices.py`): prices, long-context tiers and context windows;
5. family limits for the other models of a vendor genai-prices knows, then conservative
   defaults, so budgeting stays safe and an unknown price shows as unknown, not as zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from aistack_tui.llm.models_endpoint import ProviderListing, undated
from aistack_tui.llm.prices import PriceTier, genai_prices_id, lookup_price
from aistack_tui.llm.registry import canonical_name
from aistack_tui.llm.types import Usage


@dataclass(frozen=True, slots=True)
class ModelInfo:
    context_window: int
    max_output_tokens: int
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    price_tiers: tuple[PriceTier, ...] = ()
    """Prices for requests whose input exceeds a threshold (long-context pricing)."""


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
"""Limits every model of a family has at least, for models no source describes."""


def lookup_model(
    provider: str,
    model: str,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    listing: ProviderListing | None = None,
) -> ModelInfo:
    """The model's info from every source that knows it (see the module docstring), the
    settings override for `provider/model` merged over it last. `listing` is the
    provider's cached models-endpoint answer; `overrides` are settings `models` as
    validated there (`ModelOverride`).
    """
    vendor = canonical_name(provider)  # `gemini` is `google`
    name = model.lower().removeprefix("models/")
    own = BUILT_IN.get(vendor, {}).get(undated(name))
    info = own or _family(provider, name) or DEFAULT_INFO
    priced = lookup_price(provider, name)
    if priced is not None:
        base = priced.base
        # A built-in window wins: genai-prices' is at times what a beta header unlocks.
        window = info.context_window if own else priced.context_window or info.context_window
        info = replace(info, context_window=window, input_price=base.input_price,
                       output_price=base.output_price, cache_read_price=base.cache_read_price,
                       cache_write_price=base.cache_write_price, price_tiers=priced.tiers)
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


def _family(provider: str, name: str) -> ModelInfo | None:
    """The limits of `name`'s family, for vendors genai-prices knows (routers name models
    `vendor/model`: the last part counts)."""
    last = name.rsplit("/", 1)[-1]
    if genai_prices_id(provider) is None:
        return None
    return next((info for prefix, info in _FAMILIES if last.startswith(prefix)), None)


def cost_usd(info: ModelInfo, usage: Usage) -> float | None:
    """The cost of one response's `usage` in USD, or None when the model's prices are
    unknown.

    Cache prices default to the input price when only that is known. A long-context tier
    applies to the whole request once its input (uncached, cache reads and cache writes
    together) exceeds the tier's threshold, as the providers bill it.
    """
    prices = [info.input_price, info.output_price, info.cache_read_price,
              info.cache_write_price]
    total_input = (
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    )
    for tier in info.price_tiers:
        if total_input > tier.above_input_tokens:
            tiered = [tier.input_price, tier.output_price, tier.cache_read_price,
                      tier.cache_write_price]
            prices = [new if new is not None else old for new, old in zip(tiered, prices,
                                                                          strict=True)]
    input_price, output_price, cache_read, cache_write = prices
    if input_price is None or output_price is None:
        return None
    total = (
        usage.input_tokens * input_price
        + usage.output_tokens * output_price
        + usage.cache_read_input_tokens * (input_price if cache_read is None else cache_read)
        + usage.cache_creation_input_tokens
        * (input_price if cache_write is None else cache_write)
    )
    return total / 1_000_000
