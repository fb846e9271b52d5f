"""The model catalogue: which models each configured provider offers, their limits,
prices and deprecation, and the default model of each provider.

The list is the provider's models endpoint as last cached under `$AISTACK_HOME`
(`llm/models_endpoint.py` renews it in the background), else the built-in list of
`llm/model_info.py`, so a fresh offline machine still has one. A model is deprecated when
its endpoint's lifecycle or shutdown date says so, or genai-prices' `deprecated` flag (the
only source for Gemini, without a date); nothing is read from the SDKs' private modules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from aistack_tui.llm.model_info import BUILT_IN, ModelInfo, lookup_model, prices_entry
from aistack_tui.llm.models_endpoint import ProviderListing, read_listing, undated
from aistack_tui.llm.registry import canonical_name, parse_model_string

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-5-5", "openai": "gpt-6.1-sol", "google": "gemini-4-argon"}
"""The model used when only a provider is known: each provider's current general model
for coding (`tests/llm/test_catalogue.py` fails when its endpoint or genai-prices says it
is deprecated)."""

_VENDOR = {"anthropic": "Anthropic", "openai": "OpenAI", "google": "Google"}
_VERSION = re.compile(r"\d+(?:[.-]\d+)*")


@dataclass(frozen=True, slots=True)
class Deprecation:
    """A deprecated (or retired) model, as the sources say it."""

    provider: str
    model: str
    shutdown_date: str | None
    """ISO date from which requests fail, when announced."""
    retired: bool
    """The provider says requests to it already fail."""
    source: str
    replacement: str | None = None
    """`provider/model` to switch to."""

    def message(self, today: date | None = None) -> str:
        """One sentence for a session notice: what, until when, and what instead."""
        name, when = f"{self.provider}/{self.model}", self.shutdown_date
        vendor = _VENDOR.get(self.provider, self.provider)
        if self.retired:
            text = f"{name} has been retired by {vendor}: requests to it fail"
        elif when and when <= (today or date.today()).isoformat():
            text = f"{name} is deprecated and was shut down on {when}: requests to it may fail"
        elif when:
            text = f"{name} is deprecated: {vendor} shuts it down on {when}"
        else:
            text = f"{name} is deprecated by {vendor} (no shutdown date announced)"
        if self.replacement:
            text += f". Switch to {self.replacement} (--model, /model or the `model` setting)"
        return text + "."


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One model of one provider, with everything the picker and `aistack models` show."""

    provider: str
    model: str
    info: ModelInfo
    deprecation: Deprecation | None
    display_name: str | None = None

    @property
    def model_string(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def is_default(self) -> bool:
        return DEFAULT_MODELS.get(self.provider) == self.model


@dataclass(frozen=True, slots=True)
class ProviderCatalogue:
    provider: str
    source: str
    """Where the list came from: `models endpoint` or `built-in table`."""
    fetched_at: float | None
    """When the endpoint answered (epoch seconds), for `models endpoint` only."""
    entries: tuple[CatalogueEntry, ...]


def _listed(provider: str, home: Path | None) -> tuple[ProviderListing | None, list[str]]:
    """`provider`'s cached endpoint answer (None without one) and the ids it offers: the
    endpoint's (retired ones and the dated snapshots of listed aliases left out: one row
    per model), else the built-in list."""
    listing = read_listing(home, provider) if home is not None else None
    if listing is None:
        return None, list(BUILT_IN.get(provider, {}))
    ids = [m.id for m in listing.models if m.lifecycle != "retired"]
    return listing, [m for m in ids if undated(m) == m or undated(m) not in ids]


def _deprecations(provider: str, ids: list[str], listing: ProviderListing | None
                  ) -> dict[str, Deprecation]:
    """The deprecated models among `ids`, by the endpoint's lifecycle or shutdown date and
    genai-prices' flag, each with the model to use instead."""
    gone: dict[str, Deprecation] = {}
    for model in ids:
        ends = listing.find(model) if listing is not None else None
        if ends is not None and not (ends.lifecycle in ("deprecated", "retired")
                                     or ends.shutdown_date):
            ends = None
        priced = prices_entry(provider, model)
        sources = ([f"the {provider} models endpoint"] if ends is not None else []) + (
            ["genai-prices"] if priced is not None and priced.deprecated else [])
        if sources:
            gone[model] = Deprecation(provider, model, ends and ends.shutdown_date,
                                      ends is not None and ends.lifecycle == "retired",
                                      ", ".join(sources))
    current = [m for m in ids if m not in gone]
    default = DEFAULT_MODELS.get(provider)
    fallback = None if default in gone else default
    return {m: replace(d, replacement=f"{provider}/{to}") if (
        to := replacement_for(m, current, fallback)) else d for m, d in gone.items()}


def _line(model: str) -> tuple[str, tuple[int, ...]]:
    """`claude-sonnet-4-5` → (`claude-sonnet-#`, (4, 5)); `gpt-5.4-mini` → (`gpt-#-mini`,
    (5, 4)): models of one line differ in their version only."""
    bare = undated(model)
    found = _VERSION.search(bare)
    version = tuple(int(n) for n in re.findall(r"\d+", found.group())) if found else ()
    return _VERSION.sub("#", bare, count=1), version


def replacement_for(model: str, current: Sequence[str], default: str | None) -> str | None:
    """The newest of `current` (models not deprecated) in `model`'s line that is newer than
    it, else `default` (current too) unless that is `model` itself."""
    line, version = _line(model)
    newer = [(v, c) for c in current for same, v in [_line(c)] if same == line and v > version]
    return max(newer)[1] if newer else default if default != model else None


def provider_catalogue(provider: str, *, home: Path | None = None,
                       overrides: Mapping[str, Mapping[str, Any]] | None = None
                       ) -> ProviderCatalogue:
    """Every model `provider` offers: the default first, current models in the source's
    order (newest first for Anthropic), deprecated ones last."""
    provider = canonical_name(provider)
    listing, ids = _listed(provider, home)
    gone = _deprecations(provider, ids, listing)
    names = {m.id: m.display_name for m in listing.models} if listing is not None else {}
    entries = [CatalogueEntry(provider, m, lookup_model(provider, m, overrides, listing=listing),
                              gone.get(m), names.get(m)) for m in ids]
    entries.sort(key=lambda e: (e.deprecation is not None, not e.is_default))
    return ProviderCatalogue(provider, "models endpoint" if listing else "built-in table",
                             listing.fetched_at if listing else None, tuple(entries))


def deprecation_warning(model_string: str, *, home: Path | None = None,
                        today: date | None = None) -> str | None:
    """A one-sentence warning naming the shutdown date and the replacement when
    `model_string` is deprecated or retired; None for a current (or unknown) model.
    Reads only local data (genai-prices, the endpoint cache under `home`), so it is safe
    to call while a session starts."""
    try:
        provider, model = parse_model_string(model_string)
    except ValueError:
        return None
    provider = canonical_name(provider)
    listing, ids = _listed(provider, home)
    found = _deprecations(provider, ids if model in ids else [*ids, model], listing).get(model)
    return found.message(today) if found else None
