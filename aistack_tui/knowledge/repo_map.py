"""The ranked repository map: PageRank over "file A uses a name file B defines".

As in aider, files are nodes and an edge A→B carries the references A makes to names
defined in B (sqrt of the count, long descriptive names up, `_private` ones down, names
defined in many files spread thin). Unlike aider, the expensive part happens once per
index refresh, never per prompt:

- `build_graph` + the global `pagerank` run after each refresh (in a thread);
- per turn, `personalized_rank` runs a *local push* approximation of personalised
  PageRank (Andersen, Chung and Lang 2006) from the files and symbols in the
  conversation. Its work is bounded by `max_pushes`, not by the size of the repository,
  so a turn costs the same in a 70k-file tree as in a 50-file one.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

DAMPING = 0.85
TOP_FILES = 500
MAX_OUT_EDGES = 40
MAX_DEFINERS = 12
"""A name defined in more files than this (`__init__`, `get`, `main`) links nothing."""
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
MAP_KINDS = frozenset(
    {"class", "function", "method", "interface", "struct", "enum", "type", "trait", "impl",
     "module", "macro", "heading"}
)  # fmt: skip


@dataclass
class RepoGraph:
    """The definition/reference graph of one index, with its global ranks."""

    paths: dict[int, str] = field(default_factory=dict)
    out: dict[int, dict[int, float]] = field(default_factory=dict)
    defined_in: dict[str, tuple[int, ...]] = field(default_factory=dict)
    rank: dict[int, float] = field(default_factory=dict)
    def_score: dict[tuple[int, str], float] = field(default_factory=dict)
    ids_by_path: dict[str, int] = field(default_factory=dict)
    out_total: dict[int, float] = field(default_factory=dict)
    top: list[int] = field(default_factory=list)
    """File ids by global rank, best first (the first `TOP_FILES`), sorted once."""
    entries: dict[int, str] = field(default_factory=dict)
    """Rendered map entries by file id, filled as turns need them (`file_entry`)."""


def _name_weight(name: str) -> float:
    weight = 1.0
    if len(name) >= 8 and ("_" in name.strip("_") or any(c.isupper() for c in name[1:])):
        weight *= 10.0
    if name.startswith("_"):
        weight *= 0.1
    return weight


def pagerank(
    nodes: Iterable[int],
    out: Mapping[int, Mapping[int, float]],
    *,
    personalization: Mapping[int, float] | None = None,
    damping: float = DAMPING,
    max_iter: int = 50,
    tol: float = 1e-8,
) -> dict[int, float]:
    """Weighted PageRank by power iteration; dangling mass follows the teleport vector."""
    node_list = list(nodes)
    n = len(node_list)
    if n == 0:
        return {}
    if personalization:
        total = sum(personalization.values())
        teleport = {k: v / total for k, v in personalization.items() if v > 0}
    else:
        teleport = dict.fromkeys(node_list, 1.0 / n)
    out_total = {u: sum(edges.values()) for u, edges in out.items() if edges}
    rank = dict.fromkeys(node_list, 1.0 / n)
    for _ in range(max_iter):
        nxt = dict.fromkeys(node_list, 0.0)
        dangling = 0.0
        for u in node_list:
            r = rank[u]
            total_w = out_total.get(u, 0.0)
            if total_w <= 0.0:
                dangling += r
                continue
            share = damping * r / total_w
            for v, w in out[u].items():
                nxt[v] += share * w
        spread = 1.0 - damping + damping * dangling
        for v, t in teleport.items():
            nxt[v] += spread * t
        delta = sum(abs(nxt[u] - rank[u]) for u in node_list)
        rank = nxt
        if delta < tol * n:
            break
    return rank


def personalized_rank(
    graph: RepoGraph,
    seeds: Mapping[int, float],
    *,
    alpha: float = 1.0 - DAMPING,
    eps: float = 2e-4,
    max_pushes: int = 500,
) -> dict[int, float]:
    """Approximate personalised PageRank by local push from `seeds`.

    Only nodes within reach of the seeds are touched, and at most `max_pushes` of them
    are expanded, so the cost does not grow with the repository.
    """
    total = sum(seeds.values())
    if total <= 0:
        return {}
    residual: dict[int, float] = {k: v / total for k, v in seeds.items() if v > 0}
    estimate: dict[int, float] = defaultdict(float)
    queue = list(residual)
    pushes = 0
    while queue and pushes < max_pushes:
        u = queue.pop()
        r = residual.get(u, 0.0)
        if r < eps:
            continue
        pushes += 1
        estimate[u] += alpha * r
        residual[u] = 0.0
        edges = graph.out.get(u)
        if not edges:
            continue
        total_w = graph.out_total.get(u) or sum(edges.values())
        spread = (1.0 - alpha) * r / total_w
        for v, w in edges.items():
            before = residual.get(v, 0.0)
            after = before + spread * w
            residual[v] = after
            if before < eps <= after:
                queue.append(v)
    return dict(estimate)


def build_graph(
    paths: Mapping[int, str],
    definitions: Iterable[tuple[int, str]],
    references: Iterable[tuple[int, str, int]],
) -> RepoGraph:
    """The graph plus global ranks and per-definition scores (run after each refresh)."""
    definers: dict[str, set[int]] = defaultdict(set)
    for file_id, name in definitions:
        definers[name].add(file_id)
    defined_in = {name: tuple(sorted(ids)) for name, ids in definers.items()}
    out: dict[int, dict[int, float]] = defaultdict(dict)
    edge_names: dict[tuple[int, int], list[tuple[str, float]]] = defaultdict(list)
    for src, name, count in references:
        targets = defined_in.get(name)
        if not targets or len(targets) > MAX_DEFINERS:
            continue
        weight = _name_weight(name) * math.sqrt(count) / len(targets)
        for dst in targets:
            if dst == src:
                continue
            edges = out[src]
            edges[dst] = edges.get(dst, 0.0) + weight
            edge_names[(src, dst)].append((name, weight))
    # Keep each file's strongest edges only: the map is about what a file mostly
    # depends on, and a bounded fan-out keeps every local push step cheap.
    pruned = {
        src: dict(sorted(edges.items(), key=lambda kv: -kv[1])[:MAX_OUT_EDGES])
        for src, edges in out.items()
    }
    graph = RepoGraph(
        paths=dict(paths),
        out=pruned,
        defined_in=defined_in,
        ids_by_path={p: i for i, p in paths.items()},
    )
    graph.out_total = {src: sum(edges.values()) for src, edges in pruned.items()}
    graph.rank = pagerank(paths.keys(), graph.out)
    graph.top = [k for k, _ in sorted(graph.rank.items(), key=lambda kv: -kv[1])[:TOP_FILES]]
    # Each file passes its rank along its edges to the definitions it uses (aider's
    # way of ranking definitions, not just files).
    def_score: dict[tuple[int, str], float] = defaultdict(float)
    totals = {src: sum(edges.values()) for src, edges in out.items()}
    for (src, dst), names in edge_names.items():
        total_w = totals[src]
        for name, weight in names:
            def_score[(dst, name)] += graph.rank.get(src, 0.0) * weight / total_w
    graph.def_score = dict(def_score)
    return graph


def seeds_for(
    graph: RepoGraph, mentioned_files: Iterable[str], text: str, extra_files: Iterable[str] = ()
) -> dict[int, float]:
    """Personalisation: files in the conversation, and files defining names it mentions."""
    seeds: dict[int, float] = defaultdict(float)
    for path in mentioned_files:
        file_id = graph.ids_by_path.get(path.lstrip("./"))
        if file_id is not None:
            seeds[file_id] += 10.0
    for path in extra_files:
        file_id = graph.ids_by_path.get(path)
        if file_id is not None:
            seeds[file_id] += 2.0
    for word in set(_IDENT.findall(text)):
        targets = graph.defined_in.get(word)
        if targets and len(targets) <= MAX_DEFINERS:
            for file_id in targets:
                seeds[file_id] += _name_weight(word) / len(targets)
    return dict(seeds)


def rank_files(graph: RepoGraph, seeds: Mapping[int, float], limit: int) -> list[int]:
    """File ids best first: personalised rank blended with the global one."""
    top = graph.top or sorted(graph.rank, key=lambda k: -graph.rank[k])
    if not seeds:
        return top[:limit]
    local = personalized_rank(graph, seeds)
    local_total = sum(local.values()) or 1.0
    scores: dict[int, float] = {k: 0.8 * v / local_total for k, v in local.items()}
    # The global top files fill the map once the neighbourhood is exhausted.
    for file_id in top[: limit * 2]:
        scores[file_id] = scores.get(file_id, 0.0) + 0.2 * graph.rank.get(file_id, 0.0)
    ordered = sorted(scores.items(), key=lambda kv: -kv[1])
    return [file_id for file_id, _ in ordered[:limit]]


@dataclass(frozen=True, slots=True)
class MapSymbol:
    name: str
    qualname: str
    kind: str
    line: int
    signature: str


def _in_map(symbol: MapSymbol) -> bool:
    """Top-level definitions and class members; not functions nested in functions."""
    if symbol.kind not in MAP_KINDS:
        return False
    if symbol.kind == "heading":
        return symbol.qualname.count(" > ") < 3
    return symbol.qualname.count(".") < 2 and not (
        symbol.kind == "function" and "." in symbol.qualname
    )


PER_FILE = 12
"""Definitions shown per file in the map."""


def file_entry(graph: RepoGraph, file_id: int, symbols: list[MapSymbol]) -> str:
    """One file's map entry: its path, then its best `PER_FILE` definitions in line order.

    It depends only on the graph (the definitions' scores) and the file's symbols, so it
    is kept in `graph.entries` until the next rebuild replaces the graph: per turn only
    the files new to the map are fetched and formatted (a map of 60 stdlib files cost
    ~20 ms of symbol rows and sorting before).
    """
    path = graph.paths.get(file_id, "")
    defs = [s for s in symbols if _in_map(s)]
    defs.sort(key=lambda s: (-graph.def_score.get((file_id, s.name), 0.0), s.line))
    chosen = sorted(defs[:PER_FILE], key=lambda s: s.line)
    lines = [f"{path}:"]
    for s in chosen:
        depth = s.qualname.count(".") if s.kind != "heading" else s.qualname.count(" > ")
        lines.append(f"{'  ' * (depth + 1)}{s.line}: {s.signature or s.name}"[:160])
    if len(defs) > PER_FILE:
        lines.append(f"  … {len(defs) - PER_FILE} more")
    return "\n".join(lines)


def missing_entries(graph: RepoGraph, file_ids: Iterable[int]) -> list[int]:
    """The files whose map entry is not cached yet (their symbols must be fetched)."""
    return [f for f in file_ids if f not in graph.entries and f in graph.paths]


def render_map(
    graph: RepoGraph,
    file_ids: list[int],
    symbols: Mapping[int, list[MapSymbol]],
    token_budget: int,
) -> str:
    """Files in rank order with their best definitions, cut to `token_budget` (chars/4).

    `symbols` needs the files of `missing_entries` only; the others come from the cache.
    """
    budget_chars = token_budget * 4
    parts: list[str] = []
    used = 0
    for file_id in file_ids:
        if file_id not in graph.paths:
            continue
        block = graph.entries.get(file_id)
        if block is None:
            block = graph.entries[file_id] = file_entry(graph, file_id,
                                                        symbols.get(file_id, []))
        if used + len(block) + 1 > budget_chars:
            head = block.partition("\n")[0]
            if used + len(head) + 1 <= budget_chars:
                parts.append(head)
                used += len(head) + 1
            continue
        parts.append(block)
        used += len(block) + 1
    return "\n".join(parts)
