"""The model catalogue: which models each configured provider offers, their limits, prices
and deprecation, and the default model of each provider.

Where the list of models comes from, best first:

1. the provider's models endpoint, as last cached under `$AISTACK_HOME`
   (`llm/models_endpoint.py` renews it in the background);
2. the installed SDK's model type (`llm/sdk_models.py`), offline;
3. the built-in table of `llm/model_info.py`, for vendors with neither.

Limits and prices of each model come from `lookup_model` (endpoint cache, genai-prices,
built-in table, settings overrides), deprecations from `llm/deprecations.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from aistack_tui.llm.deprecations import (
    Deprecation,
    deprecated_ids,
    find_deprecation,
    replacement_for,
)
from aistack_tui.llm.model_info import ModelInfo, built_in_models, lookup_model
from aistack_tui.llm.models_cache import read_listing
from aistack_tui.llm.registry import (
    KNOWN_PROVIDERS,
    ProviderConfig,
    canonical_name,
    parse_model_string,
    resolve_provider_config,
)
from aistack_tui.llm.sdk_models import sdk_models

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-5-5",
    "openai": "gpt-6.1-sol",
    "google": "gemini-4-argon",
}
"""The model used when only a provider is known: each provider's current general model
for coding, chosen from the installed SDK's model list and priced by genai-prices
(`tests/llm/test_catalogue.py` fails when an SDK update deprecates one of them)."""

_NOT_TEXT = re.compile(
    r"(embed|tts|transcribe|image|audio|realtime|search|lyria|robotics|omni|banana|-live"
    r"|customtools|^codex-mini)"
)
"""Ids in the SDK type lists that name speech, image, video or special-purpose models."""
_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


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
    """Where the list came from: `models endpoint`, `<kind> SDK` or `built-in table`."""
    fetched_at: float | None
    """When the endpoint answered (epoch seconds), for `models endpoint` only."""
    entries: tuple[CatalogueEntry, ...]


def _kind(provider: str) -> str | None:
    spec = KNOWN_PROVIDERS.get(provider)
    return spec.kind if spec is not None else None


def model_ids(
    provider: str, *, kind: str | None = None, home: Path | None = None
) -> tuple[list[str], str, float | None]:
    """The ids `provider` offers, where that list came from, and when it was fetched."""
    kind = kind or _kind(provider)
    listing = read_listing(home, provider) if home is not None else None
    if listing is not None:
        ids = [m.id for m in listing.models if m.chat and m.lifecycle != "retired"]
        return _collapse_dated(ids), "models endpoint", listing.fetched_at
    sdk = sdk_models(kind) if kind and provider == kind else ()
    if sdk:
        ids = [m for m in sdk if not _NOT_TEXT.search(m)]
        return _collapse_dated(ids), f"{kind} SDK", None
    prefix = f"{canonical_name(provider)}/"
    ids = [s.removeprefix(prefix) for s in built_in_models() if s.startswith(prefix)]
    return ids, "built-in table", None


def _collapse_dated(ids: list[str]) -> list[str]:
    """Drop `X-20250929` when `X` itself is listed: one row per model, not per snapshot."""
    listed = set(ids)
    return [m for m in ids if _DATED.sub("", m) == m or _DATED.sub("", m) not in listed]


def provider_catalogue(
    provider: str,
    *,
    kind: str | None = None,
    home: Path | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> ProviderCatalogue:
    """Every model `provider` offers: the default first, current models in the source's
    order (newest first for Anthropic and the SDK lists), deprecated ones last."""
    provider = canonical_name(provider)
    kind = kind or _kind(provider)
    ids, source, fetched_at = model_ids(provider, kind=kind, home=home)
    default = DEFAULT_MODELS.get(provider)
    if default in ids:
        ids.remove(default)
        ids.insert(0, default)
    gone = deprecated_ids(provider, ids, kind=kind, home=home)
    names = _display_names(provider, home)
    entries: list[CatalogueEntry] = []
    for model in ids:
        notice = None
        if model in gone:
            notice = _with_replacement(provider, model, kind=kind, home=home)
        entries.append(CatalogueEntry(
            provider, model, lookup_model(provider, model, overrides, home=home), notice,
            names.get(model),
        ))
    entries.sort(key=lambda e: e.deprecation is not None)
    return ProviderCatalogue(provider, source, fetched_at, tuple(entries))


def _display_names(provider: str, home: Path | None) -> dict[str, str]:
    listing = read_listing(home, provider) if home is not None else None
    if listing is None:
        return {}
    return {m.id: m.display_name for m in listing.models if m.display_name}


def _with_replacement(
    provider: str, model: str, *, kind: str | None, home: Path | None
) -> Deprecation | None:
    found = find_deprecation(provider, model, kind=kind, home=home)
    if found is None:
        return None
    candidates, _source, _at = model_ids(provider, kind=kind, home=home)
    gone = deprecated_ids(provider, candidates, kind=kind, home=home)
    replacement = replacement_for(model, candidates, gone, DEFAULT_MODELS.get(provider))
    if replacement is None:
        return found
    return Deprecation(found.provider, found.model, found.shutdown_date, found.retired,
                       found.source, f"{provider}/{replacement}")


def deprecation_for(model_string: str, *, home: Path | None = None) -> Deprecation | None:
    """The deprecation of `provider/model` with the model to switch to, or None."""
    try:
        provider, model = parse_model_string(model_string)
    except ValueError:
        return None
    return _with_replacement(provider, model, kind=_kind(provider), home=home)


def deprecation_warning(
    model_string: str, *, home: Path | None = None, today: date | None = None
) -> str | None:
    """A one-sentence warning naming the shutdown date and the replacement when
    `model_string` is deprecated or retired; None for a current (or unknown) model.

    Reads only local data (the SDK, genai-prices, the endpoint cache under `home`), so it
    is safe to call while a session starts."""
    found = deprecation_for(model_string, home=home)
    return found.message(today) if found is not None else None


def configured_providers(
    provider_settings: Mapping[str, Any] | None,
    env: Mapping[str, str],
    *,
    current: str | None = None,
) -> list[ProviderConfig]:
    """The providers this user can talk to: built-in ones whose key is set, every one
    declared in settings `providers`, and the provider of `current` (`provider/model`).

    `provider_settings` is the settings' `providers` as plain dicts (keys resolved);
    `env` the environment with saved and settings keys merged in."""
    custom = dict(provider_settings or {})
    current_provider = None
    if current:
        try:
            current_provider = parse_model_string(current)[0]
        except ValueError:
            current_provider = None
    names = [*KNOWN_PROVIDERS, *(n for n in custom if n not in KNOWN_PROVIDERS)]
    configs: list[ProviderConfig] = []
    for name in names:
        try:
            config = resolve_provider_config(name, custom, custom, env)
        except ValueError:
            continue
        keyed = config.needs_key and bool(config.api_key)
        if keyed or name in custom or name == current_provider:
            configs.append(config)
    return configs


def available_models(
    configs: Sequence[ProviderConfig],
    *,
    home: Path | None = None,
    current: str | None = None,
) -> list[str]:
    """`provider/model` strings for a model picker: the current model, then each
    configured provider's current models (its default first). Deprecated models are
    left out; `aistack models` still lists them, marked."""
    models = [current] if current else []
    for config in configs:
        catalogue = provider_catalogue(config.name, kind=config.kind, home=home)
        models += [e.model_string for e in catalogue.entries if e.deprecation is None]
    return list(dict.fromkeys(models))
