"""Context windows, output limits and prices of models.

Compaction needs the context window, the request needs max output tokens, and the cost
line needs prices. Each value comes from the best source that knows it, in this order:

1. settings (`models: {"PROVIDER/MODEL": {...}}`), which always win;
2. the provider's models endpoint, cached under `$AISTACK_HOME` (`llm/models_cache.py`):
   context window and max output where the provider says them (Anthropic, Gemini);
3. genai-prices (`llm/prices.py`): prices and long-context price tiers;
4. the built-in table below, the offline fallback: limits of the models it names;
5. genai-prices' context window for models the table does not name;
6. family defaults, then conservative defaults, so budgeting stays safe and cost shows
   as unknown, not as zero.

Prices are USD per million tokens, as the providers list them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from aistack_tui.llm.prices import PriceTier, lookup_price
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


def _claude(ctx: int, out: int, price_in: float, price_out: float) -> ModelInfo:
    # Anthropic: cache reads cost 0.1x input, 5-minute cache writes 1.25x input.
    return ModelInfo(ctx, out, price_in, price_out, round(price_in * 0.1, 4), price_in * 1.25)


def _priced(
    ctx: int, out: int, price_in: float, price_out: float, cached: float | None
) -> ModelInfo:
    # OpenAI, Gemini and DeepSeek bill cache writes as ordinary input.
    return ModelInfo(ctx, out, price_in, price_out, cached, price_in)


_BUILT_IN: dict[str, dict[str, ModelInfo]] = {
    # The offline fallback: max output for models no endpoint has described yet, and
    # prices for any model genai-prices does not know. Not kept current by hand.
    "anthropic": {
        "claude-opus-4-6": _claude(200_000, 128_000, 5.0, 25.0),
        "claude-opus-4-5": _claude(200_000, 64_000, 5.0, 25.0),
        "claude-opus-4-1": _claude(200_000, 32_000, 15.0, 75.0),
        "claude-opus-4": _claude(200_000, 32_000, 15.0, 75.0),
        "claude-sonnet-4-6": _claude(200_000, 64_000, 3.0, 15.0),
        "claude-sonnet-4-5": _claude(200_000, 64_000, 3.0, 15.0),
        "claude-sonnet-4": _claude(200_000, 64_000, 3.0, 15.0),
        "claude-haiku-4-5": _claude(200_000, 64_000, 1.0, 5.0),
        "claude-3-7-sonnet": _claude(200_000, 64_000, 3.0, 15.0),
        "claude-3-5-sonnet": _claude(200_000, 8_192, 3.0, 15.0),
        "claude-3-5-haiku": _claude(200_000, 8_192, 0.8, 4.0),
    },
    "openai": {
        "gpt-5": _priced(400_000, 128_000, 1.25, 10.0, 0.125),
        "gpt-5-mini": _priced(400_000, 128_000, 0.25, 2.0, 0.025),
        "gpt-5-nano": _priced(400_000, 128_000, 0.05, 0.40, 0.005),
        "gpt-4.1": _priced(1_047_576, 32_768, 2.0, 8.0, 0.5),
        "gpt-4.1-mini": _priced(1_047_576, 32_768, 0.4, 1.6, 0.1),
        "gpt-4.1-nano": _priced(1_047_576, 32_768, 0.1, 0.4, 0.025),
        "gpt-4o": _priced(128_000, 16_384, 2.5, 10.0, 1.25),
        "gpt-4o-mini": _priced(128_000, 16_384, 0.15, 0.6, 0.075),
        "o3": _priced(200_000, 100_000, 2.0, 8.0, 0.5),
        "o3-mini": _priced(200_000, 100_000, 1.1, 4.4, 0.55),
        "o4-mini": _priced(200_000, 100_000, 1.1, 4.4, 0.275),
    },
    "google": {
        "gemini-2.5-pro": _priced(1_048_576, 65_536, 1.25, 10.0, 0.125),
        "gemini-2.5-flash": _priced(1_048_576, 65_536, 0.30, 2.50, 0.03),
        "gemini-2.5-flash-lite": _priced(1_048_576, 65_536, 0.10, 0.40, 0.01),
        "gemini-2.0-flash": _priced(1_048_576, 8_192, 0.10, 0.40, 0.025),
        "gemini-2.0-flash-lite": _priced(1_048_576, 8_192, 0.075, 0.30, None),
    },
    "deepseek": {
        "deepseek-chat": _priced(128_000, 8_192, 0.28, 0.42, 0.028),
        "deepseek-reasoner": _priced(128_000, 64_000, 0.28, 0.42, 0.028),
    },
}
_PROVIDER_TABLE = {"gemini": "google"}
_SEARCH_ALL = frozenset({"openrouter"})
"""Routers name models `vendor/model`: their last segment is looked up in every table."""


def built_in_models() -> dict[str, ModelInfo]:
    """Every built-in entry as `provider/model` (for the model picker and docs)."""
    return {f"{p}/{m}": info for p, table in _BUILT_IN.items() for m, info in table.items()}


_VERSION_SUFFIX = re.compile(r"^[-@](\d{8}|\d{4}-\d{2}-\d{2}|latest|preview|exp|\d{2}-\d{2})")
"""What may follow a known name and still be that model: a date or a release tag.
`claude-opus-4-7` is *not* `claude-opus-4` (different price), so bare suffixes do not."""

_FAMILIES = (
    ("claude-", ModelInfo(200_000, 32_000)),
    ("gemini-", ModelInfo(1_048_576, 8_192)),
    ("gpt-5", ModelInfo(400_000, 128_000)),
    ("gpt-6", ModelInfo(400_000, 128_000)),
)
"""Limits for newer models of a known family; prices stay unknown rather than guessed."""


def _find(table: Mapping[str, ModelInfo], model: str) -> ModelInfo | None:
    """Exact name, else the longest known name followed by a version suffix
    (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`, `gemini-2.5-pro-preview-05-06`)."""
    if model in table:
        return table[model]
    matches = [
        name
        for name in table
        if model.startswith(name) and _VERSION_SUFFIX.match(model[len(name) :])
    ]
    return table[max(matches, key=len)] if matches else None


def _built_in(provider: str, model: str) -> tuple[ModelInfo | None, bool]:
    """The built-in entry for the model, and whether it is the model's own entry (True)
    or only its family's defaults (False)."""
    provider = _PROVIDER_TABLE.get(provider, provider)
    name = model.lower().removeprefix("models/")
    if provider in _BUILT_IN:
        found = _find(_BUILT_IN[provider], name)
        if found is not None:
            return found, True
    last = name.rsplit("/", 1)[-1]
    if provider in _SEARCH_ALL:
        for table in _BUILT_IN.values():
            # OpenRouter writes versions with dots: anthropic/claude-sonnet-4.5
            found = _find(table, last) or _find(table, last.replace(".", "-"))
            if found is not None:
                return found, True
    if provider in _BUILT_IN or provider in _SEARCH_ALL:
        for prefix, info in _FAMILIES:
            if last.startswith(prefix):
                return info, False
    return None, False


_FIELDS = {f.name for f in fields(ModelInfo)} - {"price_tiers"}
_PRICE_FIELDS = {"input_price", "output_price", "cache_read_price", "cache_write_price"}


def lookup_model(
    provider: str,
    model: str,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    home: Path | None = None,
) -> ModelInfo:
    """The model's info from every source that knows it (see the module docstring),
    with the settings override for `provider/model` merged over it last. `home` is
    `$AISTACK_HOME`, where the models-endpoint cache lives; without it the cache is
    not read.

    Raises ValueError naming the settings key when an override has an unknown field or
    a value of the wrong type, since a silently ignored limit would mislead budgeting.
    """
    built_in, own_entry = _built_in(provider, model)
    info = built_in or DEFAULT_INFO
    priced = lookup_price(provider, model)
    if priced is not None:
        # A model's own built-in window wins over genai-prices': that one is often the
        # largest a beta header unlocks (Claude's 1M), not what a plain request gets.
        window = info.context_window if own_entry else priced.context_window
        info = replace(
            info,
            context_window=window or info.context_window,
            input_price=priced.input_price,
            output_price=priced.output_price,
            cache_read_price=priced.cache_read_price,
            cache_write_price=priced.cache_write_price,
            price_tiers=priced.tiers,
        )
    if home is not None:
        info = _with_endpoint_limits(info, home, provider, model)
    override = None
    for key in (f"{provider}/{model}", f"{_PROVIDER_TABLE.get(provider, provider)}/{model}"):
        if overrides and key in overrides:
            override = overrides[key]
            break
    if not override:
        return info
    clean = _validated(override, f"models.{provider}/{model}")
    if _PRICE_FIELDS & set(clean):
        clean["price_tiers"] = ()  # your own price replaces the provider's tiers too
    return replace(info, **clean)


def _with_endpoint_limits(info: ModelInfo, home: Path, provider: str, model: str) -> ModelInfo:
    from aistack_tui.llm.models_cache import cached_model

    found = cached_model(home, _PROVIDER_TABLE.get(provider, provider), model)
    if found is None:
        return info
    return replace(
        info,
        context_window=found.context_window or info.context_window,
        max_output_tokens=found.max_output_tokens or info.max_output_tokens,
    )


def _validated(override: Mapping[str, Any], where: str) -> dict[str, Any]:
    unknown = sorted(set(override) - _FIELDS)
    if unknown:
        raise ValueError(
            f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_FIELDS))}"
        )
    clean: dict[str, Any] = {}
    for key, value in override.items():
        if key in ("context_window", "max_output_tokens"):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{where}.{key}: expected a positive integer, got {value!r}")
            clean[key] = value
        else:
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
                raise ValueError(f"{where}.{key}: expected a price >= 0 or null, got {value!r}")
            clean[key] = None if value is None else float(value)
    return clean


def cost_usd(info: ModelInfo, usage: Usage) -> float | None:
    """The cost of one response's `usage` in USD, or None when the model's prices are
    unknown.

    Cache prices default to the input price when only that is known. A long-context
    tier applies to the whole request once its input (uncached, cache reads and cache
    writes together) exceeds the tier's threshold, as the providers bill it.
    """
    input_price, output_price = info.input_price, info.output_price
    cache_read, cache_write = info.cache_read_price, info.cache_write_price
    total_input = (
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    )
    for tier in info.price_tiers:
        if total_input > tier.above_input_tokens:
            input_price = _or(tier.input_price, input_price)
            output_price = _or(tier.output_price, output_price)
            cache_read = _or(tier.cache_read_price, cache_read)
            cache_write = _or(tier.cache_write_price, cache_write)
    if input_price is None or output_price is None:
        return None
    cache_read = cache_read if cache_read is not None else input_price
    cache_write = cache_write if cache_write is not None else input_price
    total = (
        usage.input_tokens * input_price
        + usage.output_tokens * output_price
        + usage.cache_read_input_tokens * cache_read
        + usage.cache_creation_input_tokens * cache_write
    )
    return total / 1_000_000


def _or(value: float | None, default: float | None) -> float | None:
    return value if value is not None else default
