"""Model prices (and the context windows it knows) from `genai-prices`.

genai-prices is maintained by Pydantic and released monthly; its data ships inside the
package, so a lookup never touches the network (its opt-in `UpdatePrices` is not used).
It covers Anthropic, OpenAI, Google, DeepSeek, OpenRouter and most hosted vendors, with
threshold ("long context") tiers where a provider charges more above an input size.
Local providers (ollama, vllm, lmstudio) and custom endpoints have no entry: their
prices stay unknown unless settings give them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

_PROVIDER_IDS = {
    "anthropic": "anthropic",
    "openai": "openai",
    "google": "google",
    "gemini": "google",
    "deepseek": "deepseek",
    "openrouter": "openrouter",
}
"""aistack provider name → genai-prices provider id, for the providers it prices."""


@dataclass(frozen=True, slots=True)
class PriceTier:
    """Prices that apply to a whole request once its input exceeds `above_input_tokens`
    (the "cliff" model every provider uses); None keeps the base price."""

    above_input_tokens: int
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None


@dataclass(frozen=True, slots=True)
class Priced:
    """What genai-prices says about one model; prices are USD per million tokens."""

    price_id: str
    """genai-prices' own id for the model (`claude-sonnet-4-5` for `…-20250929`)."""
    context_window: int | None
    deprecated: bool
    input_price: float | None
    output_price: float | None
    cache_read_price: float | None
    cache_write_price: float | None
    tiers: tuple[PriceTier, ...] = ()


def genai_prices_id(provider: str) -> str | None:
    """The genai-prices provider id for an aistack provider name, None when unpriced."""
    return _PROVIDER_IDS.get(provider.lower())


@functools.lru_cache(maxsize=512)
def lookup_price(provider: str, model: str) -> Priced | None:
    """genai-prices' entry for `provider/model`, or None when it has none.

    Matching is genai-prices' own (dated snapshots, `-latest` aliases, OpenRouter's
    `vendor/model` names). Prices are those in force now.
    """
    provider_id = genai_prices_id(provider)
    if provider_id is None:
        return None
    from genai_prices import data_snapshot

    name = model.lower().removeprefix("models/")
    try:
        _provider, info = data_snapshot.get_snapshot().find_provider_model(
            name, None, provider_id, None
        )
    except LookupError:
        return None
    prices = _prices_now(info)
    fields: dict[str, Any] = {
        key: getattr(prices, key, None)
        for key in ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")
    }
    base = {key: _base(value) for key, value in fields.items()}
    return Priced(
        price_id=info.id,
        context_window=info.context_window,
        deprecated=bool(info.deprecated),
        input_price=base["input_mtok"],
        output_price=base["output_mtok"],
        cache_read_price=base["cache_read_mtok"],
        cache_write_price=base["cache_write_mtok"],
        tiers=_tiers(fields),
    )


def _prices_now(info: Any) -> Any:
    """The prices in force today. Conditional prices apply from their start date on (an
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


def _base(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, Decimal | int | float):
        return float(value)
    return float(value.base)  # TieredPrices


def _tiers(fields: dict[str, Any]) -> tuple[PriceTier, ...]:
    """Collect every threshold any price has into one tier per threshold."""
    starts: set[int] = set()
    for value in fields.values():
        starts.update(tier.start for tier in getattr(value, "tiers", None) or ())
    tiers: list[PriceTier] = []
    for start in sorted(starts):
        at = {key: _price_at(value, start) for key, value in fields.items()}
        tiers.append(PriceTier(start, at["input_mtok"], at["output_mtok"],
                               at["cache_read_mtok"], at["cache_write_mtok"]))
    return tuple(tiers)


def _price_at(value: Any, start: int) -> float | None:
    """The price of one unit for requests above `start` input tokens."""
    if value is None:
        return None
    tiers = getattr(value, "tiers", None)
    if tiers is None:
        return float(value)
    price = value.base
    for tier in sorted(tiers, key=lambda t: t.start):
        if tier.start <= start:
            price = tier.price
    return float(price)
