"""The embedder protocol shared by memory and the code index.

Every stored vector records the `name` of the embedder that made it, so switching
embedders can re-embed in the background instead of mixing incomparable vectors.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    name: str
    """Stable identifier, e.g. `hash-ngram-384` or `openai/text-embedding-3-small`."""
    dim: int

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector of length `dim` per text, in order."""
        ...
