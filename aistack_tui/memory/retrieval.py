"""Hybrid ranking: bm25 and vector KNN fused with reciprocal rank fusion (RRF), then
weighted by recency and importance.

RRF needs no score calibration between the two retrievers (bm25 is unbounded, cosine is
not): each list contributes `1 / (k + rank)`, so an item both lists agree on rises above
an item only one of them likes. The weights are gentle multipliers, not additive terms,
so they reorder near-ties without letting an old-but-pinned memory beat a relevant one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

RRF_K = 60
"""The usual constant from Cormack et al.; it damps the head of each list."""

_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each
    else few for from further get got had has have having he her here hers him his how i
    if in into is it its itself just let me more most my myself no nor not now of off on
    once only or other our ours out over own please same she should so some such than
    that the their them then there these they this those through to too under until up
    us very was we were what when where which while who whom why will with would you
    your yours ok okay thanks thank yes yeah hi hello hey want need like make sure tell
    know think something anything thing things one use using used way time"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_TERM = re.compile(r"[\w][\w.+#-]*[\w+#]|\w")


def query_terms(text: str, *, limit: int = 24) -> list[str]:
    """The content words of `text`, lower-cased, deduplicated, in order."""
    seen: dict[str, None] = {}
    for match in _TERM.finditer(text.lower()):
        term = match.group()
        if term in STOPWORDS or (len(term) < 2 and not term.isdigit()):
            continue
        seen.setdefault(term, None)
        if len(seen) >= limit:
            break
    return list(seen)


def fts_or_query(text: str) -> str:
    """An FTS5 query matching any content word of `text` (each quoted, so user input
    is never FTS syntax); "" when nothing is left after dropping stop words."""
    terms = query_terms(text)
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def rrf(lists: Iterable[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion of ranked id lists (best first)."""
    scores: dict[int, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return scores


@dataclass(frozen=True, slots=True)
class Weighting:
    """How much recency and importance may move a fused score."""

    half_life_days: float = 30.0
    recency_weight: float = 0.15
    importance_weight: float = 0.25
    pinned_bonus: float = 0.1

    def factor(self, *, age_seconds: float, importance: float, pinned: bool) -> float:
        """A multiplier in roughly [1 - w_r - w_i, 1 + pinned_bonus]."""
        age_days = max(age_seconds, 0.0) / 86400.0
        recency = math.pow(0.5, age_days / self.half_life_days)
        imp = min(max(importance, 0.0), 1.0)
        value = (1.0 - self.recency_weight * (1.0 - recency)) * (
            1.0 - self.importance_weight * (1.0 - imp)
        )
        return value * (1.0 + self.pinned_bonus) if pinned else value


@dataclass(slots=True)
class Fused:
    item_id: int
    score: float
    lexical_rank: int | None
    similarity: float | None


def fuse(
    lexical: Sequence[int],
    vector: Sequence[tuple[int, float]],
    *,
    min_similarity: float,
) -> list[Fused]:
    """Fuse a bm25 list and a vector list into one, best first.

    Vector hits below `min_similarity` are dropped first: KNN always returns *something*,
    and a weak neighbour must not be ranked as if it were relevant.
    """
    kept = [(i, s) for i, s in vector if s >= min_similarity]
    scores = rrf([lexical, [i for i, _ in kept]])
    lex_rank = {item: rank for rank, item in enumerate(lexical, start=1)}
    sims = dict(kept)
    fused = [
        Fused(item, score, lex_rank.get(item), sims.get(item)) for item, score in scores.items()
    ]
    fused.sort(key=lambda f: f.score, reverse=True)
    return fused
