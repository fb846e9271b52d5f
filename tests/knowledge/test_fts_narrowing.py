"""bm25 narrowing: in a large index, rows holding only common words are not scored."""

from __future__ import annotations

import pytest

from aistack_tui.knowledge import KnowledgeIndex, search
from aistack_tui.knowledge.search import _narrowed, fts_expression, query_terms
from tests.knowledge.test_search_quality import LABELLED, _target_line


async def test_common_terms_only_narrow_once_the_index_is_large(
    bookshop_index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    terms = query_terms("shop password hashing")
    plain = fts_expression(terms)
    # The bookshop is far below the threshold: the expression is left alone.
    assert await _narrowed(bookshop_index.store, terms, plain) == plain
    # As if it were large: "shop" (in every path) is common, the others are not.
    monkeypatch.setattr(search, "NARROW_OVER", 0)
    narrowed = await _narrowed(bookshop_index.store, terms, plain)
    assert narrowed.startswith(f"({plain}) AND (")
    assert '"shop"' not in narrowed.split(" AND ", 1)[1]
    # A single term, or only rare terms, are never narrowed.
    assert await _narrowed(bookshop_index.store, ["password"], '"password"') == '"password"'
    monkeypatch.setattr(search, "COMMON_SHARE", 1.0)
    assert await _narrowed(bookshop_index.store, terms, plain) == plain


async def test_labelled_questions_hold_with_narrowing_forced(
    bookshop_index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Narrowing on every query of the small fixture (far more than a large index sees)
    keeps the hit rate of the labelled questions."""
    monkeypatch.setattr(search, "NARROW_OVER", 0)
    hits = 0
    for question, path, symbol in LABELLED:
        line = await _target_line(bookshop_index, path, symbol)
        results = await bookshop_index.search(question, limit=5)
        hits += any(r.path == path and r.start_line <= line <= r.end_line for r in results)
    print(f"\nhit@5 with narrowing forced: {hits / len(LABELLED):.3f}")
    assert hits / len(LABELLED) >= 0.9
