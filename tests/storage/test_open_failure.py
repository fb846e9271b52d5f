"""A database that cannot be opened is one clear error, and nothing after it: the
connection's thread must not outlive the event loop and die reporting to it."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from aistack_tui.storage.db import StorageError, open_database


def test_a_failed_open_leaves_no_thread_to_fail_after_the_loop_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen as a second "unexpected error in thread ... Event loop is closed" line when
    aistack's own database could not be opened at start-up (32 runs in 50 before)."""
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    path = tmp_path / "aistack.db"
    path.mkdir()  # a directory cannot be opened as a database
    before = set(threading.enumerate())
    for _ in range(20):
        with pytest.raises(StorageError, match="cannot open database"):
            asyncio.run(open_database(path))  # the loop closes right after the error
        for thread in set(threading.enumerate()) - before:
            thread.join(5)
    assert errors == []
    assert not [t for t in set(threading.enumerate()) - before if t.is_alive()]
