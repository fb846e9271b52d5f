"""Which embedder memory uses, and the provider-backed ones.

- `HashingEmbedder` (storage/hashing_embedder.py): offline, no download, always there.
- `OpenAIEmbedder` / `GeminiEmbedder`: the official SDKs, imported only when chosen.

`select_embedder(env)` reads `AISTACK_EMBEDDER`:
`hash` | `openai[/MODEL]` | `google[/MODEL]` (alias `gemini`) | `auto` (the default).
`auto` picks a provider whose key is configured and whose base URL is not overridden (a
custom base URL is usually a proxy or a local server that does not serve embeddings),
OpenAI first, else the hashing embedder. A provider that fails at run time is replaced
by the hashing embedder by the manager, which then re-embeds in the background.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aistack_tui.storage.embeddings import Embedder
from aistack_tui.storage.hashing_embedder import HashingEmbedder

OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
GEMINI_DEFAULT_MODEL = "gemini-embedding-001"
PROVIDER_DIM = 512
"""Both APIs can shorten their vectors (Matryoshka training); 512 keeps KNN cheap."""
_BATCH = 96


class EmbedderConfigError(ValueError):
    """`AISTACK_EMBEDDER` names something we cannot build; the message says what works."""


def _l2(vec: list[float]) -> list[float]:
    norm = sum(x * x for x in vec) ** 0.5
    return [x / norm for x in vec] if norm > 0 else vec


class OpenAIEmbedder:
    """OpenAI embeddings (`text-embedding-3-*`), L2-normalised, `dim` dimensions."""

    def __init__(
        self,
        api_key: str,
        model: str = OPENAI_DEFAULT_MODEL,
        *,
        dim: int = PROVIDER_DIM,
        base_url: str | None = None,
    ) -> None:
        self.model = model
        self.dim = dim
        self.name = f"openai/{model}@{dim}"
        self._api_key = api_key
        self._base_url = base_url
        self._client: Any = None

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(api_key=self._api_key, base_url=self._base_url)
        out: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            batch = [t or " " for t in texts[start : start + _BATCH]]
            resp = await self._client.embeddings.create(
                model=self.model, input=batch, dimensions=self.dim
            )
            out.extend(_l2(list(item.embedding)) for item in resp.data)
        return out


class GeminiEmbedder:
    """Gemini embeddings through google-genai, L2-normalised, `dim` dimensions."""

    def __init__(
        self, api_key: str, model: str = GEMINI_DEFAULT_MODEL, *, dim: int = PROVIDER_DIM
    ) -> None:
        self.model = model
        self.dim = dim
        self.name = f"google/{model}@{dim}"
        self._api_key = api_key
        self._client: Any = None

    async def embed(self, texts: list[str]) -> list[list[float]]:
        from google.genai import types

        if self._client is None:
            from google import genai

            self._client = genai.Client(api_key=self._api_key)
        out: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            batch: Any = [t or " " for t in texts[start : start + _BATCH]]
            resp = await self._client.aio.models.embed_content(
                model=self.model,
                contents=batch,
                config=types.EmbedContentConfig(output_dimensionality=self.dim),
            )
            out.extend(_l2(list(e.values or [])) for e in resp.embeddings or [])
        return out


def select_embedder(env: Mapping[str, str]) -> Embedder:
    """The embedder `AISTACK_EMBEDDER` asks for (see the module docstring)."""
    choice = env.get("AISTACK_EMBEDDER", "auto").strip() or "auto"
    name, _, model = choice.partition("/")
    name = name.lower()
    openai_key = env.get("OPENAI_API_KEY", "")
    google_key = env.get("GEMINI_API_KEY", "") or env.get("GOOGLE_API_KEY", "")
    if name in ("hash", "offline") or name.startswith("hash-ngram"):
        return HashingEmbedder()
    if name == "openai":
        if not openai_key:
            raise EmbedderConfigError("AISTACK_EMBEDDER=openai needs OPENAI_API_KEY")
        return OpenAIEmbedder(
            openai_key, model or OPENAI_DEFAULT_MODEL, base_url=env.get("OPENAI_BASE_URL")
        )
    if name in ("google", "gemini"):
        if not google_key:
            raise EmbedderConfigError(
                "AISTACK_EMBEDDER=google needs GEMINI_API_KEY or GOOGLE_API_KEY"
            )
        return GeminiEmbedder(google_key, model or GEMINI_DEFAULT_MODEL)
    if name != "auto":
        raise EmbedderConfigError(
            f"unknown AISTACK_EMBEDDER {choice!r}: use auto, hash, openai[/MODEL] or "
            "google[/MODEL]"
        )
    if openai_key and not env.get("OPENAI_BASE_URL"):
        return OpenAIEmbedder(openai_key)
    if google_key and not env.get("GOOGLE_GEMINI_BASE_URL"):
        return GeminiEmbedder(google_key)
    return HashingEmbedder()
