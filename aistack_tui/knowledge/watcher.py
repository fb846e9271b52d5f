"""Keep the index fresh during a session by polling the tree's stat data.

No inotify: it needs one watch per directory (a kernel tree exhausts the default limit)
and is Linux-only. A refresh that finds nothing changed only walks and stats, so the
poll interval stretches to ten times the last refresh's duration: a huge tree is polled
rarely, a small one every couple of seconds. Tools that edit files can also call
`KnowledgeIndex.refresh_paths` for an immediate, walk-free update.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from aistack_tui.knowledge.types import IndexStats

MAX_INTERVAL = 300.0


def next_interval(base: float, last_duration: float) -> float:
    """Seconds to wait before the next poll."""
    return min(MAX_INTERVAL, max(base, 10.0 * last_duration))


async def poll_forever(
    refresh: Callable[[], Awaitable[IndexStats]],
    interval: float,
    on_change: Callable[[IndexStats], None] | None = None,
) -> None:
    """Sleep, then `refresh`, forever (until cancelled); report refreshes that changed
    files. The caller has just refreshed, so the loop starts with a wait."""
    loop = asyncio.get_running_loop()
    last_duration = 0.0
    while True:
        await asyncio.sleep(next_interval(interval, last_duration))
        started = loop.time()
        stats = await refresh()
        last_duration = loop.time() - started
        if on_change is not None and (stats.parsed or stats.removed):
            on_change(stats)
