"""`asyncio.run` for a front end whose process is ours to end.

When the front end's coroutine returns, asyncio cancels the tasks left and waits for
them; an MCP server's stdio shutdown is shielded from that cancel and waits seconds on
a server that ignores its closed stdin and SIGTERM. Ending the children that are still
there first, inside the loop, makes that wait short.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from aistack_tui.shutdown.children import end_children
from aistack_tui.shutdown.deadline import process_claimed

T = TypeVar("T")
CHILD_GRACE_S = 0.3
"""SIGTERM to SIGKILL for the children left when a front end is done."""
REAP_S = 0.05


def run_front_end(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion; then (console script only) end the children left."""
    return asyncio.run(_then_end_children(main))


async def _then_end_children(main: Coroutine[Any, Any, T]) -> T:
    try:
        return await main
    finally:
        if process_claimed():
            ended: list[int] = []
            with contextlib.suppress(OSError):
                ended = end_children(CHILD_GRACE_S)
            if ended:
                # The child watcher reports each death to the loop; while the loop is
                # still open, or asyncio logs that it could not.
                await asyncio.sleep(REAP_S)
