"""Ask each provider's models endpoint what it offers, through its official SDK, and keep
the answer in the cache (`llm/models_cache.py`).

- Anthropic `GET /v1/models`: ids, context window (`max_input_tokens`), max output
  (`max_tokens`), lifecycle and retirement date;
- OpenAI `GET /v1/models` (and every OpenAI-compatible server: ollama, vLLM, OpenRouter…):
  ids and, for OpenAI, the announced `shutdown_date`; no limits;
- Gemini `models.list`: ids, input and output token limits and supported methods.

Nothing here may hold up a session: `start_background_refresh` runs on a daemon thread
with its own event loop, and a provider that is down, slow or refuses the key only
leaves its previous answer (or none) in the cache.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from aistack_tui.llm.models_cache import (
    CACHE_TTL_SECONDS,
    EndpointModel,
    ProviderListing,
    read_cache,
    write_listing,
)
from aistack_tui.llm.registry import ProviderConfig

log = logging.getLogger(__name__)

FETCH_TIMEOUT = 10.0
_GEMINI_API_VERSION = "v1beta"
_NOT_CHAT = re.compile(
    r"(embed|whisper|tts|transcribe|dall-e|gpt-image|image|moderation|realtime|audio"
    r"|search|sora|davinci|babbage|imagen|veo|lyria|aqa|robotics|omni|banana|-live)"
)
"""Model ids that name speech, image, video, embedding or moderation models."""


async def fetch_models(
    config: ProviderConfig, timeout: float = FETCH_TIMEOUT
) -> list[EndpointModel]:
    """The provider's model list, as its SDK reads it. Raises what the SDK raises."""
    if config.kind == "anthropic":
        return await _anthropic(config, timeout)
    if config.kind == "google":
        return await _google(config, timeout)
    return await _openai(config, timeout)


async def _anthropic(config: ProviderConfig, timeout: float) -> list[EndpointModel]:
    import anthropic

    client = anthropic.AsyncAnthropic(
        api_key=config.api_key, base_url=config.base_url, max_retries=0, timeout=timeout
    )
    models: list[EndpointModel] = []
    try:
        async for m in client.models.list(limit=1000):
            models.append(EndpointModel(
                id=m.id,
                display_name=m.display_name,
                context_window=m.max_input_tokens,
                max_output_tokens=m.max_tokens,
                lifecycle=m.lifecycle,
                shutdown_date=_iso_date(m.retires_at),
                line=m.line,
            ))
    finally:
        await client.close()
    return models


async def _openai(config: ProviderConfig, timeout: float) -> list[EndpointModel]:
    import openai

    from aistack_tui.llm.openai_compat import PLACEHOLDER_KEY

    client = openai.AsyncOpenAI(
        api_key=config.api_key or PLACEHOLDER_KEY, base_url=config.base_url, max_retries=0,
        timeout=timeout,
    )
    official = config.kind == "openai"
    models: list[EndpointModel] = []
    try:
        async for m in client.models.list():
            shutdown: Any = getattr(m, "shutdown_date", None)
            models.append(EndpointModel(
                id=m.id,
                shutdown_date=_iso_date(shutdown),
                # Only OpenAI's own list mixes in speech, image and embedding models.
                chat=not (official and _NOT_CHAT.search(m.id.lower())),
            ))
    finally:
        await client.close()
    return models


async def _google(config: ProviderConfig, timeout: float) -> list[EndpointModel]:
    from google import genai
    from google.genai import types as genai_types

    options: dict[str, Any] = {"api_version": _GEMINI_API_VERSION, "timeout": int(timeout * 1000)}
    if config.base_url:
        options["base_url"] = config.base_url
    client = genai.Client(
        api_key=config.api_key, vertexai=False, http_options=genai_types.HttpOptions(**options)
    )
    models: list[EndpointModel] = []
    try:
        pager = await client.aio.models.list(config={"page_size": 1000})
        async for m in pager:
            name = (m.name or "").removeprefix("models/")
            if not name:
                continue
            actions = m.supported_actions or []
            models.append(EndpointModel(
                id=name,
                display_name=m.display_name,
                context_window=m.input_token_limit,
                max_output_tokens=m.output_token_limit,
                chat="generateContent" in actions and not _NOT_CHAT.search(name.lower()),
            ))
    finally:
        await client.aio.aclose()
    return models


def _iso_date(value: Any) -> str | None:
    """`2026-11-30T00:00:00Z`, a datetime or a date → `2026-11-30`."""
    if value is None:
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()[:10]
    text = str(value).strip()
    return text[:10] if re.match(r"^\d{4}-\d{2}-\d{2}", text) else text or None


# ------------------------------------------------------------------ refresh


def is_due(listing: ProviderListing | None, config: ProviderConfig, ttl: float) -> bool:
    """True when the cache has no answer for this endpoint or it is older than `ttl`."""
    return listing is None or listing.base_url != config.base_url or listing.age() > ttl


def _can_ask(config: ProviderConfig) -> bool:
    return bool(config.api_key) or not config.needs_key


async def refresh(
    configs: Sequence[ProviderConfig],
    home: Path,
    *,
    ttl: float = CACHE_TTL_SECONDS,
    timeout: float = FETCH_TIMEOUT,
    force: bool = False,
) -> dict[str, str]:
    """Fetch the lists that are due, concurrently, and cache each answer.

    Returns what went wrong, by provider name (empty when every due fetch worked); a
    failure keeps that provider's previous answer.
    """
    listings = read_cache(home)
    due = [
        c for c in configs
        if _can_ask(c) and (force or is_due(listings.get(c.name), c, ttl))
    ]
    results = await asyncio.gather(
        *(asyncio.wait_for(fetch_models(c, timeout), timeout * 2) for c in due),
        return_exceptions=True,
    )
    errors: dict[str, str] = {}
    for config, result in zip(due, results, strict=True):
        if isinstance(result, BaseException):
            errors[config.name] = _describe(result)
            log.debug("models endpoint of %s failed: %s", config.name, errors[config.name])
            continue
        write_listing(home, config.name,
                      ProviderListing(time.time(), config.base_url, tuple(result)))
    return errors


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "timed out"
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


def start_background_refresh(
    configs: Sequence[ProviderConfig], home: Path, *, ttl: float = CACHE_TTL_SECONDS
) -> threading.Thread | None:
    """Renew the stale lists on a daemon thread and return it (None when none is due).

    The thread has its own event loop, so a slow endpoint never delays the caller's,
    and being a daemon it never keeps the program from exiting.
    """
    listings = read_cache(home)
    due = [c for c in configs if _can_ask(c) and is_due(listings.get(c.name), c, ttl)]
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
