"""The ranked repo map: PageRank, local personalised rank, budgeted rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.knowledge import KnowledgeIndex
from aistack_tui.knowledge.repo_map import RepoGraph, build_graph, pagerank, personalized_rank


def test_pagerank_of_a_cycle_is_uniform_and_sums_to_one() -> None:
    out = {1: {2: 1.0}, 2: {3: 1.0}, 3: {1: 1.0}}
    rank = pagerank([1, 2, 3], out)
    assert sum(rank.values()) == pytest.approx(1.0)
    assert all(v == pytest.approx(1 / 3) for v in rank.values())


def test_pagerank_matches_the_closed_form_of_a_star() -> None:
    # Leaves 2..5 all point at 1; 1 is dangling (its mass teleports uniformly).
    out = {i: {1: 1.0} for i in range(2, 6)}
    rank = pagerank(range(1, 6), out)
    # Leaves: r_leaf = (1 - d)/n + d * r_hub / n; hub: r_hub = r_leaf + d * 4 * r_leaf.
    d, n = 0.85, 5
    leaf = (1 - d) / n / (1 - d / n * (1 + 4 * d))
    assert rank[2] == pytest.approx(leaf, rel=1e-6)
    assert rank[1] == pytest.approx(leaf * (1 + 4 * d), rel=1e-6)


def test_local_push_approximates_personalised_pagerank() -> None:
    out = {1: {2: 1.0, 3: 1.0}, 2: {3: 1.0}, 3: {1: 1.0}, 4: {1: 1.0}}
    graph = RepoGraph(paths={i: f"f{i}" for i in range(1, 5)}, out=out)
    exact = pagerank(range(1, 5), out, personalization={2: 1.0})
    approx = personalized_rank(graph, {2: 1.0}, eps=1e-7, max_pushes=100_000)
    for node in (1, 2, 3):
        assert approx[node] == pytest.approx(exact[node], abs=1e-3)
    assert approx.get(4, 0.0) == pytest.approx(0.0)  # unreachable from the seed


def test_local_push_work_is_bounded_on_a_huge_graph() -> None:
    n = 200_000
    out = {i: {i + 1: 1.0} for i in range(n - 1)}
    graph = RepoGraph(paths={}, out=out)
    result = personalized_rank(graph, {0: 1.0}, max_pushes=500)
    assert 0 < len(result) <= 500


def test_build_graph_ranks_the_file_everyone_uses_first() -> None:
    paths = {1: "core.py", 2: "a.py", 3: "b.py", 4: "c.py"}
    definitions = [(1, "load_config"), (2, "run_a"), (3, "run_b"), (4, "run_c")]
    references = [
        (2, "load_config", 3),
        (3, "load_config", 1),
        (4, "load_config", 2),
        (4, "run_a", 1),
    ]
    graph = build_graph(paths, definitions, references)
    assert max(graph.rank, key=lambda k: graph.rank[k]) == 1
    assert graph.def_score[(1, "load_config")] > graph.def_score.get((2, "run_a"), 0.0)


async def test_context_block_is_personalised_and_within_budget(
    bookshop: Path, aistack_home: Path
) -> None:
    index = await KnowledgeIndex.open(aistack_home, bookshop)
    try:
        await index.refresh()
        block = await index.context_block(
            "the cart total looks wrong after a coupon", ["shop/cart.py"], 600
        )
        assert block.startswith("# Code knowledge")
        assert len(block) <= 600 * 4
        assert "## Repository map" in block
        map_part = block.split("## Code relevant")[0]
        assert map_part.index("shop/cart.py") < len(map_part)
        assert "apply_coupon" in block
        assert index.last_context == block
        assert await index.context_block("anything", [], 10) == ""
        big = await index.context_block("how do refunds work", [], 4000)
        assert "refund_payment" in big and len(big) <= 4000 * 4
    finally:
        await index.close()


async def test_context_block_never_exceeds_its_budget(bookshop: Path, aistack_home: Path) -> None:
    """Headers, the map and the chunks together stay within budget × 4 characters, at
    every budget size (the chunks section gets exactly what the rest leaves)."""
    index = await KnowledgeIndex.open(aistack_home, bookshop)
    try:
        await index.refresh()
        await index.wait_for_graph()
        for budget in range(50, 3000, 53):
            for message, files in (("the cart total looks wrong after a coupon", ["shop/cart.py"]),
                                   ("", ["shop/auth.py"])):  # fmt: skip
                block = await index.context_block(message, files, budget)
                assert len(block) <= budget * 4, (budget, message, len(block))
    finally:
        await index.close()


async def test_repo_map_follows_references_from_the_mentioned_file(
    tmp_path: Path, aistack_home: Path
) -> None:
    (tmp_path / "util.py").write_text("def compute_checksum(data):\n    return 1\n")
    (tmp_path / "app.py").write_text(
        "from util import compute_checksum\n\ndef main():\n    compute_checksum(b'x')\n"
    )
    for i in range(30):
        (tmp_path / f"noise{i}.py").write_text(f"def noise_{i}():\n    return {i}\n")
    index = await KnowledgeIndex.open(aistack_home, tmp_path)
    try:
        await index.refresh()
        block = await index.context_block("", ["app.py"], 120)
        lines = [line for line in block.splitlines() if line.endswith(".py:")]
        assert lines[:2] == ["app.py:", "util.py:"]
    finally:
        await index.close()


async def test_graph_catches_up_in_the_background_after_an_edit(
    tmp_path: Path, aistack_home: Path
) -> None:
    (tmp_path / "util.py").write_text("def compute_checksum(data):\n    return 1\n")
    index = await KnowledgeIndex.open(aistack_home, tmp_path)
    try:
        await index.refresh()
        assert index.graph is not None and set(index.graph.paths.values()) == {"util.py"}
        (tmp_path / "app.py").write_text("def main():\n    compute_checksum(b'x')\n")
        await index.refresh_paths([tmp_path / "app.py"])
        await index.wait_for_graph()
        graph = index.graph
        assert graph is not None
        app, util = graph.ids_by_path["app.py"], graph.ids_by_path["util.py"]
        assert util in graph.out[app]
    finally:
        await index.close()


async def test_map_entries_are_reused_per_graph_and_follow_an_edit(
    tmp_path: Path, aistack_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's rendered entry is kept with the graph: the next turn fetches no symbols
    for it; after an edit the rebuilt graph renders the file's new definitions."""
    from aistack_tui.knowledge import injection

    (tmp_path / "util.py").write_text("def compute_checksum(data):\n    return 1\n")
    (tmp_path / "app.py").write_text(
        "from util import compute_checksum\n\ndef main():\n    compute_checksum(b'x')\n"
    )
    fetched: list[list[int]] = []
    real = injection._map_symbols

    async def counting(store: object, file_ids: list[int]) -> object:
        fetched.append(list(file_ids))
        return await real(store, file_ids)  # type: ignore[arg-type]

    monkeypatch.setattr(injection, "_map_symbols", counting)
    index = await KnowledgeIndex.open(aistack_home, tmp_path)
    try:
        await index.refresh()
        await index.wait_for_graph()
        first = await index.context_block("", ["app.py"], 400)
        assert "compute_checksum" in first and len(fetched[-1]) == 2
        assert await index.context_block("", ["app.py"], 400) == first
        assert fetched[-1] == [], "cached entries were fetched again"

        (tmp_path / "util.py").write_text(
            "def compute_checksum(data):\n    return 1\n\ndef verify_checksum(data):\n"
            "    return 2\n"
        )
        await index.refresh_paths([tmp_path / "util.py"])
        await index.wait_for_graph()
        after = await index.context_block("", ["app.py"], 400)
        assert "verify_checksum" in after
    finally:
        await index.close()
