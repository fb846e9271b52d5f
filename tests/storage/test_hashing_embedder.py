"""The offline hashing embedder, alone and inside a sqlite-vec KNN query."""

from __future__ import annotations

import json
import math
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from aistack_tui.storage.db import open_database
from aistack_tui.storage.embeddings import Embedder
from aistack_tui.storage.hashing_embedder import HashingEmbedder, serialize_f32, split_identifier

SAMPLE = "def getUserName(user_id): return db.fetch_user(user_id).name  # naïve ✓"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_implements_the_embedder_protocol() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.name == "hash-ngram-384"
    assert emb.dim == 384
    vecs = await emb.embed([SAMPLE, "", "!!! ???"])
    assert [len(v) for v in vecs] == [384, 384, 384]
    for v in vecs:
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-9)
    assert HashingEmbedder(dim=64).name == "hash-ngram-64"


@pytest.mark.parametrize("dim", [0, 8, -1, 3.5, True])
def test_rejects_a_bad_dimension(dim: object) -> None:
    with pytest.raises(ValueError, match="dim must be an integer"):
        HashingEmbedder(dim=dim)  # type: ignore[arg-type]


def test_identifiers_are_split() -> None:
    assert split_identifier("getHTTPResponse_code2") == ["get", "http", "response", "code", "2"]
    assert split_identifier("naïve") == ["naïve"]


def test_vectors_are_identical_across_processes() -> None:
    """blake2b, not the per-process salted hash(): stored vectors stay comparable."""
    here = HashingEmbedder().embed_sync([SAMPLE])[0]
    script = (
        "import json, sys\n"
        "from aistack_tui.storage.hashing_embedder import HashingEmbedder\n"
        "print(json.dumps(HashingEmbedder().embed_sync([sys.argv[1]])[0]))\n"
    )
    for seed in ("1", "987654"):
        out = subprocess.run(
            [sys.executable, "-c", script, SAMPLE],
            capture_output=True,
            check=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert json.loads(out.stdout) == here


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    emb = HashingEmbedder()
    query, near, far = emb.embed_sync(
        [
            "open the sqlite database and run the migrations",
            "run database migrations after opening sqlite",
            "the cat sat on a warm mat in the afternoon sun",
        ]
    )
    assert cosine(query, near) > 0.5
    assert cosine(query, near) > cosine(query, far) + 0.3


def test_identifier_splitting_matches_prose_to_code() -> None:
    emb = HashingEmbedder()
    code, prose, other = emb.embed_sync(
        ["def load_user_profile(userId):", "load the user profile", "parse the yaml config file"]
    )
    assert cosine(code, prose) > cosine(code, other)


def test_character_ngrams_tolerate_typos_and_inflection() -> None:
    emb = HashingEmbedder()
    base, typo, other = emb.embed_sync(["connection refused", "conection refusing", "apple pie"])
    assert cosine(base, typo) > cosine(base, other) + 0.2


async def test_large_batches_give_the_same_vectors_off_thread() -> None:
    emb = HashingEmbedder()
    texts = [f"chunk {i} " + "word " * 2000 for i in range(6)]  # > 50k chars in total
    assert await emb.embed(texts) == HashingEmbedder().embed_sync(texts)


def test_serialize_f32_is_little_endian_float32() -> None:
    blob = serialize_f32([1.0, -2.5, 0.0])
    assert blob == struct.pack("<3f", 1.0, -2.5, 0.0)


VOCAB = [
    "parser",
    "lexer",
    "token",
    "cache",
    "index",
    "query",
    "vector",
    "storage",
    "session",
    "message",
    "thread",
    "socket",
    "buffer",
    "stream",
    "render",
    "widget",
    "layout",
    "screen",
    "button",
    "input",
    "output",
    "server",
    "client",
    "retry",
    "timeout",
    "schema",
    "migration",
    "config",
    "loader",
    "plugin",
    "registry",
    "provider",
    "model",
    "budget",
    "memory",
    "file",
    "path",
    "glob",
    "grep",
    "diff",
    "patch",
    "commit",
    "branch",
    "merge",
    "rebase",
    "hook",
    "skill",
    "agent",
    "tool",
]


def make_docs(n: int, rng: random.Random) -> list[str]:
    return [" ".join(rng.sample(VOCAB, 8)) + f" item{i}" for i in range(n)]


async def test_sqlite_vec_knn_finds_the_right_neighbour(tmp_path: Path) -> None:
    rng = random.Random(7)
    docs = make_docs(300, rng)
    emb = HashingEmbedder()
    db, caps = await open_database(tmp_path / "vec.db")
    try:
        assert caps.vec, caps.vec_error
        await db.execute(f"CREATE VIRTUAL TABLE docs USING vec0(embedding float[{emb.dim}])")
        vectors = await emb.embed(docs)
        await db.executemany(
            "INSERT INTO docs(rowid, embedding) VALUES (?, ?)",
            [(i, serialize_f32(v)) for i, v in enumerate(vectors)],
        )
        await db.commit()
        for target in (0, 57, 123, 299):
            words = docs[target].split()[:8]
            rng.shuffle(words)
            query = " ".join(words[:6])  # a reordered subset of the document's words
            (qvec,) = await emb.embed([query])
            cur = await db.execute(
                "SELECT rowid, distance FROM docs WHERE embedding MATCH ? AND k = 3"
                " ORDER BY distance",
                (serialize_f32(qvec),),
            )
            rows = list(await cur.fetchall())
            assert rows[0][0] == target, (query, docs[target], docs[rows[0][0]])
    finally:
        await db.close()
