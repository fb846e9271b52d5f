"""Each provider's models endpoint, asked through its SDK's public `models.list`, and the
cache of its chat models under `$AISTACK_HOME`.

Reading the cache never touches the network, so start-up reads it however old it is; an
answer older than an hour is renewed on a daemon thread. A provider that is down, slow or
refuses the key leaves its last answer in place: a stale list beats none.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, OnErrorOmit, ValidationError

from aistack_tui.atomic_file import write_atomically
from aistack_tui.llm.registry import ProviderConfig, canonical_name

log = logging.getLogger(__name__)

CACHE_TTL_SECONDS = 3600.0
CACHE_VERSION = 2
FETCH_TIMEOUT = 10.0
_NOT_CHAT = re.compile(
    r"(embed|whisper|tts|transcribe|dall-e|gpt-image|image|moderation|realtime|audio"
    r"|search|sora|davinci|babbage|imagen|veo|lyria|aqa|robotics|omni|banana|-live)"
)
_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{3})$")


def undated(model: str) -> str:
    """`claude-sonnet-4-5-20250929`, `gpt-5.5-2026-04-23`, `gemini-2.0-flash-001` → the
    model's alias: a dated snapshot is the same model as far as a person is concerned."""
    return _DATED.sub("", model)


@dataclass(frozen=True, slots=True)
class EndpointModel:
    """One model as a provider's models endpoint describes it, in one shape for all."""

    id: str
    display_name: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    lifecycle: str | None = None
    """Anthropic: `active`, `deprecated` or `retired`; None where the provider does not say."""
    shutdown_date: str | None = None
    """ISO date of the announced end (Anthropic `retires_at`, OpenAI `shutdown_date`)."""


@dataclass(frozen=True, slots=True)
class ProviderListing:
    """One provider's answer and when it was fetched (seconds since the epoch)."""

    fetched_at: float
    base_url: str | None
    models: tuple[EndpointModel, ...]

    def find(self, model: str) -> EndpointModel | None:
        """`model`'s entry: its own, else its dated snapshot's or its alias's (the
        Anthropic endpoint lists `claude-sonnet-4-5-20250929`; people write the alias)."""
        name = model.removeprefix("models/")
        same = [m for m in self.models if undated(m.id) == undated(name)]
        return next((m for m in same if m.id == name), same[0] if same else None)


async def fetch_models(config: ProviderConfig, timeout: float = FETCH_TIMEOUT
                       ) -> list[EndpointModel]:
    """The provider's chat models, as its SDK reads them. Raises what the SDK raises."""
    if config.kind == "anthropic":
        import anthropic

        async with anthropic.AsyncAnthropic(api_key=config.api_key, base_url=config.base_url,
                                            max_retries=0, timeout=timeout) as client:
            return [EndpointModel(m.id, m.display_name, m.max_input_tokens, m.max_tokens,
                                  m.lifecycle, _day(m.retires_at))
                    async for m in client.models.list(limit=1000)]
    if config.kind == "google":
        from google import genai

        async with genai.Client(api_key=config.api_key, vertexai=False, http_options={
                "api_version": "v1beta", "timeout": int(timeout * 1000),
                "base_url": config.base_url}).aio as gemini:
            return [EndpointModel(m.name.removeprefix("models/"), m.display_name,
                                  m.input_token_limit, m.output_token_limit)
                    async for m in await gemini.models.list(config={"page_size": 1000})
                    if m.name and "generateContent" in (m.supported_actions or ())
                    and not _NOT_CHAT.search(m.name.lower())]
    import openai

    from aistack_tui.llm.openai_compat import PLACEHOLDER_KEY

    official = config.kind == "openai"  # only OpenAI's own list mixes in other kinds
    async with openai.AsyncOpenAI(api_key=config.api_key or PLACEHOLDER_KEY, timeout=timeout,
                                  base_url=config.base_url, max_retries=0) as client:
        return [EndpointModel(m.id, shutdown_date=_day(getattr(m, "shutdown_date", None)))
                async for m in client.models.list()
                if not (official and _NOT_CHAT.search(m.id.lower()))]


def _day(value: object) -> str | None:
    """A datetime or `2026-11-30T00:00:00Z` → `2026-11-30`."""
    return str(value)[:10] if value else None


def cache_path(home: Path) -> Path:
    return home / "cache" / "models.json"


class _CacheFile(BaseModel):
    """The cache file, validated as it is read: a damaged provider entry is left out
    (`OnErrorOmit`), so it hides only itself."""

    version: int
    providers: dict[str, OnErrorOmit[ProviderListing]]


def read_cache(home: Path) -> dict[str, ProviderListing]:
    """Every provider's cached listing; an unreadable or foreign file reads as empty."""
    try:
        cache = _CacheFile.model_validate_json(cache_path(home).read_bytes())
    except (OSError, ValidationError):
        return {}
    return cache.providers if cache.version == CACHE_VERSION else {}


def read_listing(home: Path, provider: str) -> ProviderListing | None:
    return read_cache(home).get(canonical_name(provider))  # `gemini` is `google`


def _due(configs: Sequence[ProviderConfig], home: Path, ttl: float, force: bool = False
         ) -> list[ProviderConfig]:
    """The providers to ask: those with a key (or needing none) with no answer from this
    endpoint in the cache, or one older than `ttl`."""
    listings = read_cache(home)
    return [c for c in configs if (c.api_key or not c.needs_key) and (
        force or (listing := listings.get(c.name)) is None or listing.base_url != c.base_url
        or time.time() - listing.fetched_at > ttl)]


async def refresh(configs: Sequence[ProviderConfig], home: Path, *,
                  ttl: float = CACHE_TTL_SECONDS, timeout: float = FETCH_TIMEOUT,
                  force: bool = False) -> dict[str, str]:
    """Fetch the lists that are due, concurrently, and cache the answers with the other
    providers' (atomically, so a reader or a second aistack process never sees half a
    file). Returns what went wrong, by provider name; a failure keeps that provider's
    last answer."""
    due = _due(configs, home, ttl, force)
    results = await asyncio.gather(
        *(asyncio.wait_for(fetch_models(c, timeout), timeout * 2) for c in due),
        return_exceptions=True)
    listings = read_cache(home)
    errors: dict[str, str] = {}
    for config, result in zip(due, results, strict=True):
        if isinstance(result, BaseException):
            errors[config.name] = _describe(result)
        else:
            listings[config.name] = ProviderListing(time.time(), config.base_url, tuple(result))
    if len(errors) < len(due):
        cache = _CacheFile(version=CACHE_VERSION, providers=listings)
        write_atomically(cache_path(home), cache.model_dump_json(indent=1))
    return errors


def _describe(error: BaseException) -> str:
    text = "timed out" if isinstance(error, TimeoutError) else f"{type(error).__name__}: {error}"
    return text.strip().splitlines()[0].removesuffix(":")[:200]


def start_background_refresh(configs: Sequence[ProviderConfig], home: Path, *,
                             ttl: float = CACHE_TTL_SECONDS) -> threading.Thread | None:
    """Renew the stale lists on a daemon thread and return it (None when none is due).
    Its own event loop keeps a slow endpoint from delaying the caller's, and being a
    daemon it never keeps the program from exiting."""
    due = _due(configs, home, ttl)
    if not due:
        return None

    def run() -> None:
        try:
            asyncio.run(refresh(due, home, ttl=ttl))
        except Exception:  # a background refresh must never surface as a crash
            log.debug("models refresh failed", exc_info=True)

    thread = threading.Thread(target=run, name="aistack-models-refresh", daemon=True)
    thread.start()
    return thread
