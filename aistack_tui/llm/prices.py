"""Model prices, context windows and the deprecated flag, from `genai-prices`.

genai-prices is maintained by Pydantic and released monthly; its data ships inside the
package, so a lookup never touches the network (its opt-in `UpdatePrices` is not used).
It covers Anthropic, OpenAI, Google, DeepSeek, OpenRouter and most hosted vendors, with
threshold ("long context") tiers where a provider charges more above an input size.
Local providers (ollama, vllm, lmstudio) and custom endpoints have no entry: their prices
stay unknown unless settings give them. Prices are USD per million tokens.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

_PROVIDER_IDS = {"anthropic": "anthropic", "openai": "openai", "google": "google",
                 "gemini": "google", "deepseek": "deepseek", "openrouter": "openrouter"}
"""aistack provider name → genai-prices provider id, for the providers it prices."""
_KEYS = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")


@dataclass(frozen=True, slots=True)
class PriceTier:
    """Prices that apply to a whole request once its input exceeds `above_input_tokens`
    (the "cliff" every provider uses); None keeps the base price."""

    above_input_tokens: int
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None


@dataclass(frozen=True, slots=True)
class Priced:
    """What genai-prices says about one model."""

    context_window: int | None
    deprecated: bool
    base: PriceTier
    """The prices below every threshold (its `above_input_tokens` is 0)."""
    tiers: tuple[PriceTier, ...] = ()


def genai_prices_id(provider: str) -> str | None:
    """The genai-prices provider id for an aistack provider name, None when unpriced."""
    return _PROVIDER_IDS.get(provider.lower())


@functools.lru_cache(maxsize=512)
def lookup_price(provider: str, model: str) -> Priced | None:
    """genai-prices' entry for `provider/model` with the prices in force now, or None.
    Matching is genai-prices' own (dated snapshots, `-latest` aliases, OpenRouter's
    `vendor/model` names)."""
    provider_id = genai_prices_id(provider)
    if provider_id is None:
        return None
    from genai_prices import data_snapshot

    try:
        _provider, info = data_snapshot.get_snapshot().find_provider_model(
            model.lower().removeprefix("models/"), None, provider_id, None)
    except LookupError:
        return None
    prices = _prices_now(info)
    values: list[Any] = [getattr(prices, key, None) for key in _KEYS]
    starts = sorted({t.start for v in values for t in getattr(v, "tiers", None) or ()})
    return Priced(info.context_window, bool(info.deprecated), _tier(values, 0),
                  tuple(_tier(values, start) for start in starts))


def _prices_now(info: Any) -> Any:
    """The prices in force today. A conditional price applies from its start date on (an
    introductory rate until then); a time-of-day price (DeepSeek's peak hours) counts as
    always in force, so the cost and the budget stop never rely on an off-peak discount."""
    from genai_prices.types import ModelPrice, TimeOfDateConstraint

    if isinstance(info.prices, ModelPrice):
        return info.prices
    now = datetime.now(tz=UTC)
    for conditional in reversed(info.prices):
        constraint = conditional.constraint
        if (constraint is None or isinstance(constraint, TimeOfDateConstraint)
                or constraint.active(now)):
            return conditional.prices
    return info.prices[0].prices


def _tier(values: list[Any], start: int) -> PriceTier:
    """Each price (input, output, cache read, cache write) for requests above `start`
    input tokens: a tiered price's highest tier at or below `start`, else its base."""
    at: list[float | None] = []
    for value in values:
        tiers = getattr(value, "tiers", None)
        if tiers is not None:
            value = value.base
            for tier in sorted(tiers, key=lambda t: t.start):
                value = tier.price if tier.start <= start else value
        at.append(None if value is None else float(value))
    return PriceTier(start, *at)
