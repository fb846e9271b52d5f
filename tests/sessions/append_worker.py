"""Subprocess helper for the crash and multi-process tests (run as a script).

usage: append_worker.py HOME SESSION_ID COUNT LABEL [hang]

Appends COUNT user messages labelled `LABEL-<i>`; with `hang`, prints `done` once they
are committed and then sleeps until killed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from aistack_tui.llm.types import Message
from aistack_tui.sessions.sqlite_store import open_session_store


async def main(home: Path, session_id: str, count: int, label: str, hang: bool) -> None:
    store = await open_session_store(home)
    for i in range(count):
        await store.append(session_id, Message.user(f"{label}-{i}"))
    if hang:
        print("done", flush=True)
        time.sleep(600)
    await store.close()


if __name__ == "__main__":
    home, session_id, count, label = sys.argv[1:5]
    asyncio.run(main(Path(home), session_id, int(count), label, sys.argv[5:] == ["hang"]))
