"""Hybrid code search: FTS5 (bm25), vector KNN and symbol-name match, fused with RRF.

Each ranker is good at something different: bm25 over body, symbol and identifier
sub-words finds the words of the question; vectors catch near-spellings and
morphology the stemmer misses; the symbol ranker puts a definition first when the
query names it (`open_database`, or "open database" as adjacent words). Reciprocal rank
fusion (score = Σ 1/(k + rank)) needs no score calibration between them.
"""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import pairwise

from aistack_tui.knowledge.chunks import split_identifier
from aistack_tui.knowledge.store import QUANTIZE, IndexStore
from aistack_tui.knowledge.types import CodeHit
from aistack_tui.storage.db import DB_ERRORS
from aistack_tui.storage.embeddings import Embedder

RRF_K = 60
CANDIDATES = 50
SNIPPET_LINES = 30
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_STOPWORDS_TEXT = """a an and are as at be by can do does for from get gets got has have how i
    if in into is it its me my of on or our should that the their them then there these this to was
    we what when where which who why will with you your code function method class file
    find show look located implemented implement handle handles handled defined
    logic place part thing things some any all"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
# bm25 column weights: path, symbol, identifier sub-words, body.
_BM25 = "bm25(chunks_fts, 1.5, 4.0, 1.5, 1.0)"
NARROW_OVER = 6000
"""Matching rows (summed over the terms) above which common terms stop adding rows."""
COMMON_SHARE = 0.05
"""Only a term in more than this share of the chunks may be set aside as common."""


def query_terms(query: str) -> list[str]:
    """Lower-cased search words: identifiers split, stop words dropped, order kept."""
    terms: dict[str, None] = {}
    for match in _WORD.finditer(query):
        token = match.group(0)
        parts = split_identifier(token) or [token.lower()]
        for word in (token.lower(), *parts) if len(parts) > 1 else parts:
            if word not in STOPWORDS and len(word) > 1:
                terms[word] = None
    return list(terms)


def fts_expression(terms: Sequence[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms if '"' not in t)


def _symbol_candidates(query: str, terms: Sequence[str]) -> list[str]:
    """Names the query may spell: its identifiers, and adjacent words joined."""
    names: dict[str, None] = {}
    for match in _WORD.finditer(query):
        token = match.group(0)
        if len(token) > 2 and token.lower() not in STOPWORDS:
            names[token] = None
    for first, second in pairwise(terms):
        names[f"{first}_{second}"] = None
        names[f"{first}{second}"] = None
    return list(names)


async def _narrowed(store: IndexStore, terms: Sequence[str], expression: str) -> str:
    """`expression`, or, when it matches many rows, `(expression) AND (rarer terms)`.

    bm25 costs about 1-2 µs per matching row, so in a large index common words ("type"
    is in 8,400 of the 56k stdlib chunks) made one query cost up to 20 ms. Rows that
    hold only the query's most common words are its weakest bm25 matches; requiring one
    of the rarer words keeps every word's contribution to the rows that remain (their
    rarer words then count twice, which only lowers the common words' weight further).
    The most common words are set aside, most frequent first, until the rest match at
    most `NARROW_OVER` rows; a word is only set aside if it is in more than
    `COMMON_SHARE` of the chunks, and narrowing must at least halve the rows scored.
    """
    if len(terms) < 2:
        return expression
    # One round trip: the index size (ids are dense enough) and each term's row count,
    # read from the doclists without scoring (about 0.1 ms per 1,000 rows).
    count = "SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
    rows = await store.db.execute_fetchall(
        " UNION ALL ".join(["SELECT COALESCE(MAX(id), 0) FROM chunks", *[count] * len(terms)]),
        [f'"{t}"' for t in terms],
    )
    size, *counts = (int(r[0]) for r in rows)
    total = sum(counts)
    if total <= NARROW_OVER:
        return expression
    kept = sorted((n, t) for t, n in zip(terms, counts, strict=True) if n)
    rest = total
    while len(kept) > 1 and rest > NARROW_OVER and kept[-1][0] > size * COMMON_SHARE:
        rest -= kept.pop()[0]
    if rest * 2 > total:
        return expression
    return f"({expression}) AND ({fts_expression([t for _, t in kept])})"


async def _fts(store: IndexStore, terms: Sequence[str]) -> list[int]:
    expression = fts_expression(terms)
    if not expression:
        return []
    try:
        if NARROW_OVER >= 0:
            expression = await _narrowed(store, [t for t in terms if '"' not in t], expression)
        cursor = await store.db.execute(
            f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY {_BM25} LIMIT ?",
            (expression, CANDIDATES),
        )
    except DB_ERRORS:
        return []
    return [int(r[0]) for r in await cursor.fetchall()]


async def _vectors(store: IndexStore, embedder: Embedder | None, query: str) -> list[int]:
    if embedder is None or not store.vec_dim:
        return []
    from aistack_tui.storage.hashing_embedder import serialize_f32

    vector = (await embedder.embed([query]))[0]
    if store.vector_cache is not None:
        found = await store.vector_cache.knn(vector, CANDIDATES)
        if found is not None:
            return found
    db = store.reader or store.db
    cursor = await db.execute(
        f"SELECT rowid FROM chunk_vec WHERE embedding MATCH {QUANTIZE} AND k = ? ORDER BY distance",
        (serialize_f32(vector), CANDIDATES),
    )
    return [int(r[0]) for r in await cursor.fetchall()]


async def _symbols(store: IndexStore, names: Sequence[str]) -> list[int]:
    if not names:
        return []
    marks = ",".join("?" * len(names))
    # The smallest chunk holding each matching definition's first line. On the reader
    # connection when there is one, in parallel with the bm25 query on the writer.
    cursor = await (store.reader or store.db).execute(
        "SELECT s.name, s.kind, (SELECT c.id FROM chunks c WHERE c.file_id = s.file_id"
        "   AND c.start_line <= s.start_line AND c.end_line >= s.start_line"
        "   ORDER BY c.end_line - c.start_line LIMIT 1)"
        f" FROM symbols s WHERE s.name COLLATE NOCASE IN ({marks}) LIMIT 200",
        list(names),
    )
    rows = [(str(r[0]), str(r[1]), r[2]) for r in await cursor.fetchall() if r[2] is not None]
    rows.sort(key=lambda r: (-len(r[0]), r[1] == "heading"))
    seen: dict[int, None] = {}
    for _, _, chunk_id in rows:
        seen[int(chunk_id)] = None
    return list(seen)[:CANDIDATES]


def fuse(
    rankings: Sequence[Sequence[int]], weights: Sequence[float] | None = None
) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of several ranked id lists, best first."""
    scores: dict[int, float] = defaultdict(float)
    for index, ranking in enumerate(rankings):
        weight = weights[index] if weights else 1.0
        for rank, item in enumerate(ranking):
            scores[item] += weight / (RRF_K + rank + 1)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def _snippet(text: str, max_lines: int = SNIPPET_LINES) -> str:
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text
    return "\n".join([*lines[:max_lines], f"… ({len(lines) - max_lines} more lines)"])


async def hybrid_search(
    store: IndexStore,
    embedder: Embedder | None,
    query: str,
    limit: int = 10,
    *,
    use_vectors: bool = True,
    visible: Callable[[str], bool] | None = None,
) -> list[CodeHit]:
    """The best `limit` chunks for a natural-language or identifier query.

    `visible(path)` leaves out chunks of files the caller may not show; the fused ranking
    is read page by page until `limit` visible chunks are found.
    """
    terms = query_terms(query)
    vector_task = asyncio.ensure_future(_vectors(store, embedder, query)) if use_vectors else None
    try:
        fts_ids, symbol_ids = await asyncio.gather(
            _fts(store, terms), _symbols(store, _symbol_candidates(query, terms))
        )
        vector_ids = await vector_task if vector_task is not None else []
    finally:
        if vector_task is not None and not vector_task.done():
            vector_task.cancel()
    fused = fuse([fts_ids, vector_ids, symbol_ids], [1.0, 0.7, 1.2])
    if limit <= 0:
        return []
    hits: list[CodeHit] = []
    page = limit if visible is None else max(limit * 2, 20)
    for start in range(0, len(fused), page):
        window = fused[start : start + page]
        rows = await store.chunk_rows([chunk_id for chunk_id, _ in window])
        for chunk_id, score in window:
            row = rows.get(chunk_id)
            if row is None or (visible is not None and not visible(row.path)):
                continue
            hits.append(
                CodeHit(
                    path=row.path,
                    start_line=row.start_line,
                    end_line=row.end_line,
                    symbol=row.symbol,
                    kind=row.kind,
                    snippet=_snippet(row.text),
                    score=round(score, 6),
                )
            )
            if len(hits) >= limit:
                return hits
        if visible is None:
            break  # unfiltered: the first `limit` ids are the answer, as before
    return hits
