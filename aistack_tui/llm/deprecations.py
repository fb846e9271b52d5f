"""Which models are on their way out, when they stop working, and what to use instead.

Three sources, most authoritative first; any of them marking a model counts, and the
first that gives a date gives it:

1. the provider's models endpoint, from the cache (Anthropic `lifecycle` and
   `retires_at`, OpenAI `shutdown_date`);
2. the installed SDK's own deprecation data (`llm/sdk_models.py`);
3. genai-prices' `deprecated` flag (the only source for Gemini; it has no date).

The replacement is the newest current model of the same line (`claude-sonnet-4-5` →
the newest `claude-sonnet-*`, `gpt-5-mini` → the newest `gpt-*-mini`, `gemini-2.0-flash`
→ the newest `gemini-*-flash`), else the provider's default model.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from aistack_tui.llm.models_cache import read_listing
from aistack_tui.llm.prices import lookup_price
from aistack_tui.llm.sdk_models import sdk_deprecations

_VENDOR = {"anthropic": "Anthropic", "openai": "OpenAI", "google": "Google"}
_SHAPES = (
    re.compile(r"^(?P<fam>claude)-(?P<line>[a-z]+)-(?P<ver>\d+(?:-\d{1,2})?)(?P<tag>-preview)?"
               r"(?P<date>-\d{8})?$"),
    re.compile(r"^(?P<fam>claude)-(?P<line>[a-z]+)(?P<tag>-preview)$"),
    re.compile(r"^(?P<fam>claude)-(?P<ver>\d+(?:-\d)?)-(?P<line>[a-z]+)(?P<date>-\d{8}|-latest)?$"),
    re.compile(r"^(?P<fam>gpt)-(?P<ver>\d+(?:\.\d+)?)(?:-(?P<line>[a-z][a-z-]*?))?"
               r"(?P<tag>-preview)?(?P<date>-\d{4}-\d{2}-\d{2})?$"),
    re.compile(r"^(?P<fam>o)(?P<ver>\d+)(?:-(?P<line>[a-z][a-z-]*?))?(?P<tag>-preview)?"
               r"(?P<date>-\d{4}-\d{2}-\d{2})?$"),
    re.compile(r"^(?P<fam>gemini)-(?P<ver>\d+(?:\.\d+)?)-(?P<line>[a-z][a-z-]*?)"
               r"(?P<tag>-preview|-exp)?(?P<date>-\d{2}-\d{2}|-\d{3})?$"),
)


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

    @property
    def model_string(self) -> str:
        return f"{self.provider}/{self.model}"

    def message(self, today: date | None = None) -> str:
        """One sentence for a session notice: what, until when, and what instead."""
        today = today or date.today()
        name = self.model_string
        vendor = _VENDOR.get(self.provider, self.provider)
        when = self.shutdown_date
        if self.retired:
            text = f"{name} has been retired by {vendor}: requests to it fail"
        elif when and _before(when, today):
            text = f"{name} is deprecated and was shut down on {when}: requests to it may fail"
        elif when:
            text = f"{name} is deprecated: {vendor} shuts it down on {when}"
        else:
            text = f"{name} is deprecated by {vendor} (no shutdown date announced)"
        if self.replacement:
            text += f". Switch to {self.replacement} (--model, /model or the `model` setting)"
        return text + "."


def _before(iso: str, today: date) -> bool:
    try:
        return date.fromisoformat(iso) <= today
    except ValueError:
        return False


def find_deprecation(
    provider: str, model: str, *, kind: str | None = None, home: Path | None = None
) -> Deprecation | None:
    """The deprecation facts about `provider/model` (without a replacement), or None
    when no source marks it. `kind` picks the SDK whose data applies (the provider's
    own name for the built-in ones)."""
    name = model.removeprefix("models/")
    marked = False
    retired = False
    shutdown: str | None = None
    sources: list[str] = []
    if home is not None:
        listing = read_listing(home, provider)
        entry = listing.find(name) if listing is not None else None
        if entry is not None and (entry.lifecycle in ("deprecated", "retired")
                                  or entry.shutdown_date):
            marked, retired = True, entry.lifecycle == "retired"
            shutdown = entry.shutdown_date
            sources.append(f"the {provider} models endpoint")
    table = sdk_deprecations(kind or provider)
    key = name if name in table else _undated(name)
    if key in table:
        marked = True
        shutdown = shutdown or table[key]
        sources.append(f"the {kind or provider} SDK")
    priced = lookup_price(provider, name)
    if priced is not None and priced.deprecated:
        marked = True
        sources.append("genai-prices")
    if not marked:
        return None
    return Deprecation(provider, name, shutdown, retired, ", ".join(sources))


def _undated(model: str) -> str:
    return re.sub(r"-(\d{8}|\d{4}-\d{2}-\d{2})$", "", model)


def deprecated_ids(
    provider: str, models: Iterable[str], *, kind: str | None = None, home: Path | None = None
) -> set[str]:
    """Those of `models` that some source marks deprecated or retired."""
    return {m for m in models if find_deprecation(provider, m, kind=kind, home=home)}


def _shape(model: str) -> tuple[str, tuple[int, ...], bool, bool] | None:
    """(line, version, is_preview, is_dated) of a model id, None for unknown shapes."""
    for pattern in _SHAPES:
        m = pattern.match(model)
        if m is None:
            continue
        groups = m.groupdict()
        ver = tuple(int(p) for p in re.split(r"[.-]", groups.get("ver") or "") if p)
        line = f"{groups['fam']}:{groups.get('line') or ''}"
        return line, ver, bool(groups.get("tag")), bool(groups.get("date"))
    return None


def replacement_for(
    model: str, candidates: Iterable[str], deprecated: Collection[str], default: str | None
) -> str | None:
    """The newest current model of `model`'s line among `candidates` that is newer than
    it, else `default` (when that is current and not `model` itself)."""
    shape = _shape(model)
    best: tuple[tuple[bool, tuple[int, ...]], str] | None = None
    if shape is not None:
        line, version, _preview, _dated = shape
        for candidate in candidates:
            other = _shape(candidate)
            if (other is None or candidate in deprecated or other[0] != line
                    or other[3] or other[1] <= version):
                continue
            rank = (not other[2], other[1])
            if best is None or rank > best[0]:
                best = (rank, candidate)
    if best is not None:
        return best[1]
    if default and default != model and default not in deprecated:
        return default
    return None
