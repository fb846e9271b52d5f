"""The offline embedder's vectors are pinned: stored memories and code-index vectors
depend on them, so a speed-up of `HashingEmbedder` must give bit-identical floats.

The digests were taken from the embedder as it was before it was optimised (same text,
same dimension → same float64 values, compared through their exact bytes).
"""

from __future__ import annotations

import hashlib
import math
from array import array

import pytest

from aistack_tui.storage.hashing_embedder import HashingEmbedder

TEXTS = [
    "",
    "...!?",
    "def parseHTTPRequest(self, raw_bytes):\n    return self._parser.feed(raw_bytes)",
    "Größe straße naïve café 東京 données",
    "aistack_tui/knowledge/store.py IndexStore.write\n" + "chunk_id = self._next_chunk_id\n" * 40,
    "x" * 300 + " getUserName get_user_name HTTPServer",
    "bad \udcff surrogate tokens \ud800x",
]
PINNED = [
    (128, 0, "8eb3fe6213a72add20fbb2fa98045725"),
    (128, 1, "8eb3fe6213a72add20fbb2fa98045725"),
    (128, 2, "99a9b73cfc9003f94986c7c096c5cff6"),
    (128, 3, "6f06b23a24e6d00f0efef655d23d3dc4"),
    (128, 4, "be35ef829815e1404cd73dcf9225b220"),
    (128, 5, "6b24068a3fd7dfb6dbd449f12755184d"),
    (128, 6, "5ebbb073725aa714593a8ac47cb0aeb0"),
    (384, 0, "86ed0bc9d170c0bf6630e761bf6fd7d3"),
    (384, 1, "86ed0bc9d170c0bf6630e761bf6fd7d3"),
    (384, 2, "ef7065f91ba6cb2210f8033dc473bbc4"),
    (384, 3, "71b23960664d5d413a6c942be54301ca"),
    (384, 4, "297a5716a945905ef636ccb795dde93e"),
    (384, 5, "013e3a3cf8eb74c23917c127c4385b20"),
    (384, 6, "a511afe26defedcc0f56a10db744df9a"),
]


def _digest(vector: list[float]) -> str:
    return hashlib.sha256(array("d", vector).tobytes()).hexdigest()[:32]


@pytest.mark.parametrize("dim", [128, 384])
def test_vectors_are_bit_identical_to_the_pinned_ones(dim: int) -> None:
    embedder = HashingEmbedder(dim)
    vectors = embedder.embed_sync(TEXTS)
    expected = {(d, i): h for d, i, h in PINNED if d == dim}
    assert {(dim, i): _digest(v) for i, v in enumerate(vectors)} == expected
    for vector in vectors:
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-9)


def test_caches_do_not_change_the_result() -> None:
    """The second embedding of a text is served from the token and bigram caches."""
    embedder = HashingEmbedder(128)
    first = embedder.embed_sync(TEXTS)
    again = embedder.embed_sync(list(reversed(TEXTS)))
    assert again == list(reversed(first))
    fresh = HashingEmbedder(128).embed_sync(TEXTS[2:3])
    assert fresh[0] == first[2]
