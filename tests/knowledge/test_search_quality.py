"""Search quality: natural-language questions over the bookshop fixture, hand-labelled."""

from __future__ import annotations

from aistack_tui.knowledge import KnowledgeIndex

# (question, file, symbol the answer lives in). Written as a user would ask, without
# copying the docstrings.
LABELLED = [
    ("how are passwords hashed before storing them", "shop/auth.py", "hash_password"),
    ("check a login password against the stored hash", "shop/auth.py", "verify_password"),
    ("generate a token for a new user session", "shop/auth.py", "create_session_token"),
    ("limit how many requests a client can make per second", "shop/auth.py", "RateLimiter"),
    ("add a book to the shopping basket", "shop/cart.py", "ShoppingCart.add_item"),
    ("apply a discount code to the cart", "shop/cart.py", "ShoppingCart.apply_coupon"),
    ("charge the customer's credit card", "shop/payments.py", "charge_card"),
    ("give money back for a cancelled order", "shop/payments.py", "refund_payment"),
    ("retry failed calls with exponential backoff", "shop/payments.py", "retry_with_backoff"),
    ("reserve copies in the warehouse for an order", "shop/inventory.py", "reserve_stock"),
    ("which products are running low and need reordering", "shop/inventory.py", "low_stock_report"),
    ("when will the parcel arrive", "shop/shipping.py", "estimate_delivery_date"),
    ("price of delivery depending on package weight", "shop/shipping.py", "shipping_cost"),
    ("check that a postal code is valid", "shop/shipping.py", "validate_postcode"),
    ("email the buyer after they place an order", "shop/emails.py", "send_order_confirmation"),
    ("fill in placeholders in a mail template", "shop/emails.py", "render_template"),
    ("split a book title into words for searching", "shop/search.py", "tokenize_title"),
    ("rank books by relevance to a search query", "shop/search.py", "rank_books"),
    ("find authors even when the name is misspelled", "shop/search.py", "fuzzy_match_author"),
    ("open the database connection", "shop/db.py", "connect_database"),
    ("upgrade the database schema", "shop/db.py", "run_migrations"),
    ("roll back the transaction when something fails", "shop/db.py", "transaction"),
    ("read configuration from environment variables", "shop/config.py", "load_settings"),
    ("turn strings like yes or on into a boolean", "shop/config.py", "parse_bool"),
    ("least recently used cache", "shop/cache.py", "LRUCache"),
    ("hide api keys and passwords in log messages", "shop/logging_setup.py", "redact_secrets"),
    ("sales totals per month", "shop/reports.py", "monthly_sales_report"),
    ("export report rows to a csv spreadsheet", "shop/reports.py", "export_csv"),
    ("http endpoint that returns a single book", "web/routes.js", "getBookHandler"),
    ("checkout api route that places the order", "web/routes.js", "checkoutHandler"),
    ("validate an email address in the browser form", "web/validation.ts", "validateEmail"),
    ("is the new password strong enough", "web/validation.ts", "isStrongPassword"),
    ("background worker that processes queued jobs", "worker/queue.go", "Worker.ProcessJobs"),
    (
        "jobs that keep failing go to a dead letter queue",
        "worker/queue.go",
        "Worker.moveToDeadLetter",
    ),
    ("how do I install the bookshop", "docs/README.md", "Installation"),
    ("undo a stock reservation when an order is abandoned", "shop/inventory.py", "release_stock"),
]


async def _target_line(index: KnowledgeIndex, path: str, qualname: str) -> int:
    rows = await index.store.db.execute_fetchall(
        "SELECT s.start_line FROM symbols s JOIN files f ON f.id = s.file_id"
        " WHERE f.path = ? AND s.qualname LIKE ?",
        (path, f"%{qualname}"),
    )
    assert rows, f"fixture has no {path}:{qualname}"
    return int(rows[0][0])


async def test_hit_at_5_over_labelled_questions_is_at_least_0_8(
    bookshop_index: KnowledgeIndex,
) -> None:
    """A question is answered when one of the top 5 chunks (at most 80 lines each) holds
    the labelled definition: the method itself, or the small class chunk it sits in."""
    assert len(LABELLED) >= 30
    misses: list[str] = []
    hits = 0
    for question, path, symbol in LABELLED:
        line = await _target_line(bookshop_index, path, symbol)
        results = await bookshop_index.search(question, limit=5)
        if any(r.path == path and r.start_line <= line <= r.end_line for r in results):
            hits += 1
        else:
            got = ", ".join(f"{r.path}:{r.symbol}" for r in results)
            misses.append(f"{question!r} -> wanted {path}:{symbol}; got {got}")
    score = hits / len(LABELLED)
    print(f"\nhit@5 = {score:.3f} ({hits}/{len(LABELLED)})")
    for miss in misses:
        print("  miss:", miss)
    assert score >= 0.8


async def test_every_chunk_has_a_vector_and_vectors_catch_misspellings(
    bookshop_index: KnowledgeIndex,
) -> None:
    db = bookshop_index.store.db
    (vectors,) = (await db.execute_fetchall("SELECT COUNT(*) FROM chunk_vec"))[0]
    (chunks,) = (await db.execute_fetchall("SELECT COUNT(*) FROM chunks"))[0]
    assert vectors == chunks > 0
    # No word of this query is spelled as in the code, so bm25 and symbol names miss;
    # the character n-gram vectors still find it.
    hits = await bookshop_index.search("pasword hashng", limit=3)
    assert any(h.symbol == "hash_password" for h in hits)
