"""An embedder that always works: feature hashing of words and character n-grams.

Memory and the code index need vectors even with no network, no API key and no model
download, so this is the default embedder. It is a bag of hashed features:

- word unigrams (lower-cased, plus the parts of camelCase / snake_case identifiers, so
  `getUserName` also counts as `get`, `user`, `name`) and word bigrams — precision;
- character 3–5-grams of each word padded with spaces — robustness to inflection,
  typos and partial identifiers.

Each feature is hashed with blake2b (stable across processes, unlike `hash()`) to a
bucket and a sign (signed hashing keeps collisions unbiased), counts are damped with
`1 + log(tf)`, the word and character blocks are normalised separately and mixed equally
(so long texts are not dominated by their many n-grams), and the result is L2-normalised.
It is lexical, not semantic: "car" and "automobile" stay unrelated.
"""

from __future__ import annotations

import asyncio
import math
import re
import sys
from array import array
from collections import Counter
from collections.abc import Sequence
from hashlib import blake2b as _blake2b
from itertools import pairwise
from operator import mul

_WORD = re.compile(r"\w+")
_IDENT_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_GRAM_SIZES = (3, 4, 5)
_GRAM_TOKEN_MAX = 64
"""Longer tokens (base64, hashes, minified code) only contribute their first characters."""
_BIGRAM_WEIGHT = 0.5
_CACHE_MAX = 200_000
_THREAD_THRESHOLD_CHARS = 50_000
"""Batches larger than this are embedded in a worker thread to keep the UI loop free."""
_EMPTY_FEATURE = "\x00empty"


def split_identifier(token: str) -> list[str]:
    """`getHTTPResponse_code` → `['get', 'http', 'response', 'code']` (lower-cased)."""
    if not token.isascii():
        return [token.lower()]
    return [
        part.lower() for chunk in token.split("_") if chunk for part in _IDENT_PART.findall(chunk)
    ]


def serialize_f32(vec: Sequence[float]) -> bytes:
    """Little-endian float32 bytes, the BLOB format sqlite-vec's `float[N]` columns take."""
    packed = array("f", vec)
    if sys.byteorder != "little":  # pragma: no cover - all supported platforms are LE
        packed.byteswap()
    return packed.tobytes()


class HashingEmbedder:
    """Offline `Embedder`: deterministic, dependency-free, ~sub-millisecond per chunk."""

    def __init__(self, dim: int = 384) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 16:
            raise ValueError(f"HashingEmbedder dim must be an integer >= 16, got {dim!r}")
        self.dim = dim
        self.name = f"hash-ngram-{dim}"
        self._buckets: dict[str, int] = {}
        self._tokens: dict[str, tuple[str, tuple[int, ...], tuple[int, ...]]] = {}
        self._pairs: dict[tuple[str, str], int] = {}

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if sum(len(t) for t in texts) > _THREAD_THRESHOLD_CHARS:
            return await asyncio.to_thread(self.embed_sync, texts)
        return self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """The same as `embed`, for callers outside an event loop."""
        return [self.embed_one(text) for text in texts]

    def embed_one(self, text: str) -> list[float]:
        # Features are counted by signed bucket (the hashing trick applied before the tf
        # damping): it bounds the Python-level loops by `2 * dim` and lets Counter do the
        # per-occurrence work in C. The arithmetic below is kept operation for operation
        # the same as the first version of this function (stored vectors depend on it);
        # only the bookkeeping around it is cheaper.
        tokens = self._tokens
        words: list[str] = []
        unigrams: list[int] = []
        grams: list[int] = []
        for raw in _WORD.findall(text):
            cached = tokens.get(raw) or self._token(raw)
            words.append(cached[0])
            unigrams.extend(cached[1])
            grams.extend(cached[2])
        pairs = self._pairs
        bigrams = [pairs.get(pair) or self._pair(pair) for pair in pairwise(words)]

        dim = self.dim
        word_vec = [0.0] * dim
        _accumulate(word_vec, Counter(unigrams), 1.0)
        _accumulate(word_vec, Counter(bigrams), _BIGRAM_WEIGHT)
        char_vec = [0.0] * dim
        _accumulate(char_vec, Counter(grams), 1.0)

        # 0.0 + y == y and a + 0.0 == a for every value that can occur here (sums of
        # non-zero terms are never -0.0), so whole-list arithmetic equals the per-element
        # "add if non-zero" of the original loop.
        vec = [0.0] * dim
        word_norm = math.sqrt(math.fsum(map(mul, word_vec, word_vec)))
        if word_norm > 0.0:
            vec = [x / word_norm for x in word_vec]
        char_norm = math.sqrt(math.fsum(map(mul, char_vec, char_vec)))
        if char_norm > 0.0:
            vec = [a + x / char_norm for a, x in zip(vec, char_vec, strict=True)]
        norm = math.sqrt(math.fsum(map(mul, vec, vec)))
        if norm == 0.0:
            # No words at all (empty or punctuation only): a fixed unit vector, so the
            # result is still normalised and all such texts are equal to each other.
            _accumulate(vec, Counter([self._bucket(_EMPTY_FEATURE)]), 1.0)
            return vec
        return [x / norm for x in vec]

    def _pair(self, pair: tuple[str, str]) -> int:
        """The signed bucket of a word bigram, cached by the pair in its own table: no
        string is built on a hit, and the long tail of rare bigrams cannot evict the
        n-gram features from theirs."""
        signed = _signed_bucket(f"b:{pair[0]} {pair[1]}", self.dim)
        if len(self._pairs) >= _CACHE_MAX:
            self._pairs.clear()
        self._pairs[pair] = signed
        return signed

    def _token(self, raw: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
        """A raw word's lower-cased form, its word features and its n-gram features."""
        cached = self._tokens.get(raw)
        if cached is None:
            lower = raw.lower()
            parts = split_identifier(raw)
            words = [lower, *parts] if len(parts) > 1 else [lower]
            padded = f" {lower[:_GRAM_TOKEN_MAX]} "
            buckets = self._buckets
            bucket = self._bucket
            features = [
                "c:" + padded[i : i + n] for n in _GRAM_SIZES for i in range(len(padded) - n + 1)
            ]
            cached = (
                lower,
                tuple(bucket("w:" + w) for w in words),
                tuple(buckets.get(f) or bucket(f) for f in features),
            )
            if len(self._tokens) >= _CACHE_MAX:
                self._tokens.clear()
            self._tokens[raw] = cached
        return cached

    def _bucket(self, feature: str) -> int:
        """The feature's signed bucket, cached (word and n-gram features repeat a lot)."""
        signed = self._buckets.get(feature)
        if signed is None:
            signed = _signed_bucket(feature, self.dim)
            if len(self._buckets) >= _CACHE_MAX:
                self._buckets.clear()
            self._buckets[feature] = signed
        return signed


def _signed_bucket(feature: str, dim: int) -> int:
    """The feature's bucket + 1, negated when its sign is negative (0 is never used,
    so the sign survives)."""
    h = int.from_bytes(
        _blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
    )
    return (h % dim + 1) * (1 if h >> 63 else -1)


_DAMPED = [0.0, *(1.0 + math.log(count) for count in range(1, 1024))]
"""`1 + log(tf)` for small counts, computed once (the same values `math.log` gives)."""


def _accumulate(vec: list[float], counts: Counter[int], weight: float) -> None:
    """Add `weight * (1 + log tf)` per signed bucket."""
    damped = _DAMPED
    for signed, count in counts.items():
        value = weight * (damped[count] if count < 1024 else 1.0 + math.log(count))
        if signed > 0:
            vec[signed - 1] += value
        else:
            vec[-signed - 1] -= value
