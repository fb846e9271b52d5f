"""Assemble the per-turn code-knowledge block: a ranked repo map plus the top chunks.

Everything here reads the database and the in-memory graph; nothing walks or parses
the tree, so a turn costs a few indexed queries whatever the size of the repository.
Vector search is left out of this path once the index holds more than
`TURN_VECTOR_MAX_CHUNKS` chunks (sqlite-vec KNN is brute force, linear in rows); bm25 and
symbol matches still find the chunks, and the `CodeSearch` tool keeps vectors.
Token counts are estimated as characters / 4, the same estimate the context layer uses.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from aistack_tui.knowledge.repo_map import (
    MAP_KINDS,
    MapSymbol,
    RepoGraph,
    missing_entries,
    rank_files,
    render_map,
    seeds_for,
)
from aistack_tui.knowledge.search import hybrid_search
from aistack_tui.knowledge.store import IndexStore
from aistack_tui.knowledge.types import CodeHit
from aistack_tui.storage.embeddings import Embedder

TURN_VECTOR_MAX_CHUNKS = 30_000
"""Above this many chunks a turn uses the vector ranker only once the in-memory vectors
have their first pass (then a search costs a few ms even at a million chunks); until
then it relies on full-text and symbol matches."""
MIN_MAP_FILES = 5
MAX_MAP_FILES = 60
TOKENS_PER_FILE = 150
_KINDS = sorted(MAP_KINDS)
TOP_CHUNKS = 6
MAP_SHARE = 0.4
"""Share of the budget for the map when there are chunks to show as well."""
_HEADER = "# Code knowledge\n\n"
_MAP_HEADING = "## Repository map (most relevant files and definitions)\n"
_CHUNK_HEADING = "## Code relevant to the request\n"
_FENCE_LANG = {".py": "python", ".js": "javascript", ".ts": "typescript", ".tsx": "tsx",
               ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c",
               ".cpp": "cpp", ".rb": "ruby", ".sh": "bash", ".md": "markdown"}  # fmt: skip


async def _map_symbols(store: IndexStore, file_ids: list[int]) -> dict[int, list[MapSymbol]]:
    if not file_ids:
        return {}
    marks = ",".join("?" * len(file_ids))
    rows = await store.db.execute_fetchall(
        "SELECT file_id, name, qualname, kind, start_line, signature FROM symbols"
        f" WHERE file_id IN ({marks}) AND kind IN ({','.join('?' * len(_KINDS))})",
        [*file_ids, *_KINDS],
    )
    out: dict[int, list[MapSymbol]] = defaultdict(list)
    for r in rows:
        out[int(r[0])].append(MapSymbol(str(r[1]), str(r[2]), str(r[3]), int(r[4]), str(r[5])))
    return out


def _fence(path: str) -> str:
    dot = path.rfind(".")
    return _FENCE_LANG.get(path[dot:].lower(), "") if dot >= 0 else ""


def render_chunks(hits: list[CodeHit], budget_chars: int) -> str:
    """Whole chunks in rank order; the first one is cut to fit rather than dropped."""
    parts: list[str] = []
    used = 0
    for hit in hits:
        label = f" ({hit.symbol})" if hit.symbol else ""
        head = f"{hit.path}:{hit.start_line}-{hit.end_line}{label}\n```{_fence(hit.path)}\n"
        body = hit.snippet
        block = f"{head}{body}\n```"
        if used + len(block) + 1 > budget_chars:
            room = budget_chars - used - len(head) - 8
            if parts or room < 200:
                continue
            block = f"{head}{body[:room]}\n```"
        parts.append(block)
        used += len(block) + 1
    return "\n".join(parts)


async def build_context_block(
    store: IndexStore,
    embedder: Embedder | None,
    graph: RepoGraph | None,
    message: str,
    mentioned_files: list[str],
    token_budget: int,
    *,
    chunk_count: int = 0,
    visible: Callable[[str], bool] | None = None,
) -> str:
    """The injected text (empty when the budget is too small or nothing is indexed).

    `visible(path)` keeps files the session may not read out of both the chunks and the
    map (see `KnowledgeIndex.visible`).
    """
    if token_budget < 50:
        return ""
    budget_chars = token_budget * 4
    hits: list[CodeHit] = []
    if message.strip():
        cache = store.vector_cache
        hits = await hybrid_search(
            store, embedder, message, TOP_CHUNKS,
            use_vectors=chunk_count <= TURN_VECTOR_MAX_CHUNKS
            or (cache is not None and cache.scales),
            visible=visible,
        )  # fmt: skip
    map_text = ""
    if graph is not None and graph.paths:
        seeds = seeds_for(graph, mentioned_files, message, [h.path for h in hits[:3]])
        map_budget = int(token_budget * MAP_SHARE) if hits else token_budget
        # Fetch only as many files as the budget can show (a file's entry is ~150
        # tokens), so a small budget does not pay for symbols it would drop.
        wanted = max(MIN_MAP_FILES, min(MAX_MAP_FILES, map_budget // TOKENS_PER_FILE + 2))
        if visible is None:
            file_ids = rank_files(graph, seeds, wanted)
        else:
            # Ask for more than needed, since hidden files drop out after ranking; rank
            # them all only when that was not enough.
            file_ids = []
            for ask in (wanted * 2, len(graph.paths)):
                ranked = rank_files(graph, seeds, ask)
                file_ids = [f for f in ranked if visible(graph.paths.get(f, ""))][:wanted]
                if len(file_ids) >= wanted or len(ranked) < ask:
                    break
        symbols = await _map_symbols(store, missing_entries(graph, file_ids))
        map_chars = map_budget * 4 - len(_HEADER) - len(_MAP_HEADING)
        map_text = render_map(graph, file_ids, symbols, max(0, map_chars) // 4)
    sections: list[str] = []
    if map_text:
        sections.append(_MAP_HEADING + map_text)
    # Exactly what the block around the chunks costs: the header, the map section and
    # the blank line after it, the chunk heading.
    used = len(_HEADER) + sum(len(s) + 2 for s in sections) + len(_CHUNK_HEADING)
    chunk_text = render_chunks(hits, budget_chars - used) if hits else ""
    if chunk_text:
        sections.append(_CHUNK_HEADING + chunk_text)
    if not sections:
        return ""
    return _HEADER + "\n\n".join(sections)
