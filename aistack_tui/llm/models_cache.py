"""The cache of what each provider's models endpoint said, under `$AISTACK_HOME/cache/`.

Reading is cheap and never touches the network, so start-up, `lookup_model` and the
model picker read the cache as it is, however old; `llm/models_endpoint.py` renews it in
the background once it is older than `CACHE_TTL_SECONDS`. A stale answer beats none: a
provider's model list changes a few times a year, and a failed refresh leaves the last
good answer in place.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from aistack_tui.json_values import as_list, as_object

CACHE_TTL_SECONDS = 3600.0
"""Short, so a deprecation or a new model shows within the hour of a session starting."""
CACHE_VERSION = 1

_DATED = re.compile(r"^-(\d{8}|\d{4}-\d{2}-\d{2}|\d{3})$")
"""What makes `claude-sonnet-4-5-20250929` the dated snapshot of `claude-sonnet-4-5`."""


@dataclass(frozen=True, slots=True)
class EndpointModel:
    """One model as a provider's models endpoint describes it, in one shape for all."""

    id: str
    display_name: str | None = None
    context_window: int | None = None
    """Anthropic `max_input_tokens`, Gemini `inputTokenLimit`; OpenAI does not say."""
    max_output_tokens: int | None = None
    """Anthropic `max_tokens`, Gemini `outputTokenLimit`."""
    lifecycle: str | None = None
    """Anthropic: `active`, `deprecated` or `retired`; None where the provider does not say."""
    shutdown_date: str | None = None
    """ISO date of the announced end of life (Anthropic `retires_at`, OpenAI
    `shutdown_date`)."""
    line: str | None = None
    """Anthropic's model line (`opus`, `sonnet`…), used to suggest a replacement."""
    chat: bool = True
    """False for models that cannot hold a conversation (embeddings, speech, images)."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EndpointModel:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True, slots=True)
class ProviderListing:
    """One provider's answer and when it was fetched (seconds since the epoch)."""

    fetched_at: float
    base_url: str | None
    models: tuple[EndpointModel, ...]

    def age(self, now: float | None = None) -> float:
        return (time.time() if now is None else now) - self.fetched_at

    def find(self, model: str) -> EndpointModel | None:
        """The entry for `model`: exact, else its dated snapshot or the alias of it
        (the Anthropic endpoint lists `claude-sonnet-4-5-20250929`; users write
        `claude-sonnet-4-5`)."""
        name = model.removeprefix("models/")
        by_id = {m.id: m for m in self.models}
        if name in by_id:
            return by_id[name]
        for m in self.models:
            if m.id.startswith(name) and _DATED.match(m.id[len(name) :]):
                return m
            if name.startswith(m.id) and _DATED.match(name[len(m.id) :]):
                return m
        return None


def cache_path(home: Path) -> Path:
    return home / "cache" / "models.json"


_parsed: dict[Path, tuple[tuple[int, int], dict[str, ProviderListing]]] = {}
"""The last parse of each cache file with its (mtime, size): a catalogue of forty models
looks the file up forty times."""


def read_cache(home: Path) -> dict[str, ProviderListing]:
    """Every provider's cached listing; an unreadable or foreign file reads as empty."""
    path = cache_path(home)
    try:
        stat = path.stat()
    except OSError:
        return {}
    stamp = (stat.st_mtime_ns, stat.st_size)
    seen = _parsed.get(path)
    if seen is not None and seen[0] == stamp:
        return dict(seen[1])
    listings = _parse(path)
    _parsed[path] = (stamp, listings)
    return dict(listings)


def _parse(path: Path) -> dict[str, ProviderListing]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    cache = as_object(data)
    if cache is None or cache.get("version") != CACHE_VERSION:
        return {}
    listings: dict[str, ProviderListing] = {}
    for name, raw in (as_object(cache.get("providers")) or {}).items():
        # One damaged entry does not hide the others.
        entry = as_object(raw) or {}
        fetched_at, base_url = entry.get("fetched_at"), entry.get("base_url")
        models = [as_object(m) for m in as_list(entry.get("models")) or [None]]
        if (
            not isinstance(fetched_at, int | float)
            or not isinstance(base_url, str | None)
            or None in models
        ):
            continue
        try:
            listings[name] = ProviderListing(
                fetched_at=float(fetched_at),
                base_url=base_url,
                models=tuple(EndpointModel.from_json(m) for m in models if m is not None),
            )
        except TypeError:  # a model entry without its required fields
            continue
    return listings


def read_listing(home: Path, provider: str) -> ProviderListing | None:
    return read_cache(home).get(provider)


def cached_model(home: Path, provider: str, model: str) -> EndpointModel | None:
    listing = read_listing(home, provider)
    return listing.find(model) if listing is not None else None


def write_listing(home: Path, provider: str, listing: ProviderListing) -> None:
    """Store one provider's listing, keeping the others; atomic, so a reader (or a
    second aistack process) never sees half a file."""
    path = cache_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    current = read_cache(home)
    current[provider] = listing
    data = {
        "version": CACHE_VERSION,
        "providers": {
            name: {
                "fetched_at": entry.fetched_at,
                "base_url": entry.base_url,
                "models": [asdict(m) for m in entry.models],
            }
            for name, entry in current.items()
        },
    }
    fd, tmp = tempfile.mkstemp(prefix=".models-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
