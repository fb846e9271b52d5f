"""The vector index: upgrade from the bit-quantised format, and the in-process matrix
(exact, partitioned, and following writes made by another connection)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from aistack_tui.memory import vectors
from aistack_tui.memory.manager import MemoryManager
from aistack_tui.memory.session_search import project_key
from aistack_tui.memory.store import MIGRATIONS, NAMESPACE
from aistack_tui.memory.vectors import VectorIndex
from aistack_tui.storage import pq_first_pass
from aistack_tui.storage.db import open_database
from aistack_tui.storage.hashing_embedder import HashingEmbedder, serialize_f32
from aistack_tui.storage.paths import database_path

FACTS = [
    "we deploy with fly.io, never heroku",
    "always use pnpm instead of npm in this repository",
    "the flaky upload test was fixed by raising the S3 mock timeout",
    "database migrations live in aistack_tui/storage and run at startup",
    "the release checklist asks for a changelog entry and a version bump",
]


def _old_table_name(embedder: HashingEmbedder) -> str:
    """How the sign-bit index of the previous format was named."""
    digest = hashlib.sha1(f"{embedder.name}/{embedder.dim}".encode()).hexdigest()[:8]
    return f"memory_vec_hash_ngram_{embedder.dim}_{digest}"


async def _make_old_database(home: Path, project: Path, embedder: HashingEmbedder) -> str:
    """A database as the previous release left it: memory schema version 3 and a
    bit-quantised `vec0` index, no change log."""
    db, caps = await open_database(database_path(home), MIGRATIONS[:3], namespace=NAMESPACE)
    assert caps.vec, caps.vec_error
    old = _old_table_name(embedder)
    await db.execute(
        f"CREATE VIRTUAL TABLE {old} USING vec0("
        f" item_id INTEGER PRIMARY KEY, part TEXT PARTITION KEY, bits bit[{embedder.dim}])"
    )
    part = project_key(project)
    for number, (fact, vector) in enumerate(
        zip(FACTS, embedder.embed_sync(FACTS), strict=True), start=1
    ):
        await db.execute(
            "INSERT INTO memories(id, kind, content, norm, project, source, created_at,"
            " updated_at) VALUES (?, 'semantic', ?, ?, ?, 'user', 1.0, 1.0)",
            (number, fact, fact.lower(), part),
        )
        blob = serialize_f32(vector)
        await db.execute(
            "INSERT INTO memory_vectors(item_id, embedder, vector) VALUES (?, ?, ?)",
            (number, embedder.name, blob),
        )
        await db.execute(
            f"INSERT INTO {old}(item_id, part, bits) VALUES (?, ?, vec_quantize_binary(?))",
            (number, part, blob),
        )
    await db.commit()
    await db.close()
    return old


async def _table_names(memory: MemoryManager) -> set[str]:
    cur = await memory.store.db.execute("SELECT name FROM sqlite_master")
    return {str(r[0]) for r in await cur.fetchall()}


async def test_old_database_is_upgraded_and_memories_are_still_found(
    aistack_home: Path, project: Path
) -> None:
    embedder = HashingEmbedder()
    old = await _make_old_database(aistack_home, project, embedder)
    memory = await MemoryManager.open(aistack_home, project, embedder, background=False)
    try:
        cur = await memory.store.db.execute(
            "SELECT MAX(version) FROM schema_migrations WHERE namespace = ?", (NAMESPACE,)
        )
        assert (await cur.fetchone())[0] == len(MIGRATIONS)
        names = await _table_names(memory)
        assert old not in names, "the bit-quantised index is dropped"
        assert memory.index.table in names and "vector_changes" in names
        cur = await memory.store.db.execute(f"SELECT COUNT(*) FROM {memory.index.table}")
        assert (await cur.fetchone())[0] == len(FACTS)

        for mode in ("vector", "hybrid"):
            hits = await memory.search_memories("how do we deploy to fly", 3, mode=mode,
                                                min_similarity=0.0)
            assert hits and hits[0].text == FACTS[0], mode
        hits = await memory.search_memories("pnpm or npm?", 3, mode="vector")
        assert hits[0].text == FACTS[1]
        # New writes after the upgrade land in the new index and the change log.
        record = await memory.write("staging runs on fly.io too", source="user")
        hits = await memory.search_memories("staging on fly.io", 3, mode="vector")
        assert record.id in {h.record.id for h in hits if h.record is not None}
    finally:
        await memory.close()


@pytest.fixture
def matrix_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use the in-process matrix however small the index is."""
    monkeypatch.setattr(vectors, "MATRIX_MIN_ROWS", 0)


async def _fill(memory: MemoryManager, count: int, start: int = 0) -> list[int]:
    ids = []
    for i in range(start, start + count):
        record = await memory.write(
            f"note {i}: the {['parser', 'uploader', 'scheduler', 'renderer'][i % 4]} module"
            f" handles case {i * 7 % 13} with flag{i % 5}", source="test",
        )
        ids.append(record.id)
    return ids


async def test_matrix_ranks_exactly_like_vec0(
    memory: MemoryManager, matrix_everywhere: None
) -> None:
    await _fill(memory, 60)
    await memory.write("the user prefers tabs over spaces", "profile", source="user")
    plain = VectorIndex(memory.store.db, prefix="memory", embedder_name=memory.embedder.name,
                        dim=memory.embedder.dim, vec_enabled=True, use_matrix=False)
    scopes = [memory.project, ""]
    for query in ("uploader module case 3", "tabs or spaces", "flag2 scheduler"):
        qvec = memory.embedder.embed_sync([query])[0]
        fast = await memory.index.knn(qvec, scopes, 10)
        exact = await plain.knn(qvec, scopes, 10)
        assert memory.index._matrix is not None
        assert [i for i, _ in fast] == [i for i, _ in exact]
        for (_, a), (_, b) in zip(fast, exact, strict=True):
            assert a == pytest.approx(b, abs=1e-4)
    # Partitions: another project's scope sees none of these memories.
    assert await memory.index.knn(qvec, ["/elsewhere"], 10) == []
    only_user = await memory.index.knn(qvec, [""], 10)
    assert [h for h, _ in only_user] == [h for h, _ in await plain.knn(qvec, [""], 10)]
    assert len(only_user) == 1


async def test_matrix_follows_writes_of_another_connection(
    aistack_home: Path, project: Path, matrix_everywhere: None
) -> None:
    embedder = HashingEmbedder()
    reader = await MemoryManager.open(aistack_home, project, embedder, background=False)
    writer = await MemoryManager.open(aistack_home, project, embedder, background=False)
    try:
        ids = await _fill(writer, 20)
        await reader.search_memories("warm up", 5, mode="vector")
        assert reader.index._matrix is not None and len(reader.index._matrix) == 20

        new = await writer.write("the deploy key rotates every ninety days", source="user")
        await writer.forget(ids[0])
        edited = await writer.edit(ids[1], "the renderer now caches glyph atlases")

        hits = await reader.search_memories("deploy key rotation", 3, mode="vector")
        assert hits[0].record is not None and hits[0].record.id == new.id
        hits = await reader.search_memories("glyph atlases cache", 3, mode="vector")
        assert hits[0].record is not None and hits[0].record.id == edited.id
        found = {h.record.id for h in await reader.search_memories(
            "note 0 parser module case 0 flag0", 20, mode="vector", min_similarity=0.0)
            if h.record is not None}
        assert ids[0] not in found
        assert len(reader.index._matrix) == 20
    finally:
        await reader.close()
        await writer.close()


async def test_matrix_reloads_when_the_log_was_pruned_past_it(
    aistack_home: Path, project: Path, matrix_everywhere: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = HashingEmbedder()
    reader = await MemoryManager.open(aistack_home, project, embedder, background=False)
    writer = await MemoryManager.open(aistack_home, project, embedder, background=False)
    try:
        await _fill(writer, 5)
        await reader.search_memories("warm up", 5, mode="vector")
        seq_before = reader.index._matrix.seq if reader.index._matrix else -1
        late = await writer.write("a memory the reader has never seen", source="user")
        await _fill(writer, 5, start=100)
        monkeypatch.setattr(vectors, "LOG_KEEP", 2)
        await writer.store.write(writer.index.prune_log)
        cur = await reader.store.db.execute("SELECT MIN(seq) FROM vector_changes")
        assert (await cur.fetchone())[0] > seq_before + 1, "the reader's position was pruned"

        hits = await reader.search_memories("memory the reader never saw", 1, mode="vector")
        assert hits[0].record is not None and hits[0].record.id == late.id
        assert reader.index._matrix is not None and len(reader.index._matrix) == 11
    finally:
        await reader.close()
        await writer.close()


def test_first_pass_keeps_the_exact_neighbours() -> None:
    """The product-quantised first pass (offline embedder) with exact re-scoring finds
    the exact top 10 for nearly every query, and the cosines it reports are the exact
    ones."""
    from aistack_tui.storage.vector_matrix import VectorMatrix

    embedder = HashingEmbedder()
    words = [f"{a}{b}" for a in ("ka", "lo", "mi", "su", "te", "vo") for b in
             ("ran", "del", "pix", "mor", "tal", "zen", "bok")]
    texts = [" ".join(words[(i * p) % len(words)] for p in (1, 3, 7, 11, 13)) + f" item{i}"
             for i in range(1200)]
    rows = [(i, "p" if i % 3 else "q", serialize_f32(v))
            for i, v in enumerate(embedder.embed_sync(texts))]
    approximate = VectorMatrix(embedder.dim, approximate=True, candidates=100,
                               approximate_min_rows=0)
    exact = VectorMatrix(embedder.dim)
    approximate.replace_all(rows, 0)
    exact.replace_all(rows, 0)
    build = approximate.first_pass_due()
    assert build is not None
    assert approximate.install_first_pass(build, build.run())
    assert approximate.first_pass_due() is None
    assert vectors.wants_first_pass(embedder.name)
    assert not vectors.wants_first_pass("openai/text-embedding-3-small@512")
    overlap = []
    for query in ("karan lodel", "mipix sumor tetal", "vozen kabok item12", "lotal sudel"):
        qvec = embedder.embed_sync([query])[0]
        got = approximate.search(qvec, ["p"], 10)
        want = exact.search(qvec, ["p"], 10)
        assert all(i % 3 for i, _ in got), "partition q is not searched"
        want_cos = dict(exact.search(qvec, ["p"], 1200))
        for item, cosine in got:
            assert cosine == pytest.approx(want_cos[item], abs=1e-5)
        overlap.append(len({i for i, _ in got} & {i for i, _ in want}) / 10)
    assert sum(overlap) / len(overlap) >= 0.9, overlap


async def test_long_lived_runs_load_the_matrix_in_the_background(
    aistack_home: Path, project: Path, matrix_everywhere: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The matrix loads in the background, then its first pass is built in a worker
    thread; searches give the same answer before, during and after."""
    monkeypatch.setattr(vectors, "APPROXIMATE_MIN_ROWS", 0)
    monkeypatch.setattr(pq_first_pass, "MIN_ROWS", 32)
    embedder = HashingEmbedder()
    first = await MemoryManager.open(aistack_home, project, embedder, background=False)
    try:
        stored = len(set(await _fill(first, 40)))  # near-duplicates merge
    finally:
        await first.close()
    memory = await MemoryManager.open(aistack_home, project, embedder)
    try:
        assert memory.index.load_in_background
        # Answered whether or not the matrix is there yet (vec0 meanwhile).
        before = await memory.search_memories("uploader module case 3", 5, mode="vector")
        await memory.index.wait_loaded()
        await memory.wait_idle()
        assert memory.index._matrix is not None and len(memory.index._matrix) == stored
        assert memory.index._matrix._first_pass is not None, "first pass not built"
        after = await memory.search_memories("uploader module case 3", 5, mode="vector")
        assert [h.text for h in after] == [h.text for h in before]
    finally:
        await memory.close()


async def test_a_failed_first_pass_build_leaves_search_exact(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from aistack_tui.storage.first_pass_builder import FirstPassBuilder
    from aistack_tui.storage.pq_first_pass import ProductQuantisedPass
    from aistack_tui.storage.vector_matrix import VectorMatrix

    def refuse(rows: object) -> ProductQuantisedPass:
        raise MemoryError("no room for the codes")

    monkeypatch.setattr(ProductQuantisedPass, "build", staticmethod(refuse))
    embedder = HashingEmbedder()
    texts = [f"note number {i} about topic {i % 17}" for i in range(1100)]
    matrix = VectorMatrix(embedder.dim, approximate=True, approximate_min_rows=0)
    matrix.replace_all([(i, "p", serialize_f32(v))
                        for i, v in enumerate(embedder.embed_sync(texts))], 0)
    assert matrix.first_pass_due() is not None
    builder = FirstPassBuilder("memory")
    builder.refresh(matrix)
    await builder.wait()
    assert matrix.first_pass_due() is None and not matrix.approximate
    assert "exact instead" in caplog.text
    query = embedder.embed_sync(["note number 5 about topic 5"])[0]
    assert matrix.search(query, ["p"], 1)[0][0] == 5
