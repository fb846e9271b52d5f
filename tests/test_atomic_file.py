"""aistack's own files (settings, trust, the models cache, checkpoints) are replaced whole:
two writers at once leave one's text, and a failed write leaves the old file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from aistack_tui.atomic_file import write_atomically


def test_two_writers_at_once_leave_one_whole_text(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "trust.json"
    texts = ["a" * 200_000, "b" * 300_000]
    barrier = threading.Barrier(2)

    def write(text: str) -> None:
        barrier.wait()
        for _ in range(20):
            write_atomically(path, text)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert path.read_text() in texts
    assert [p.name for p in path.parent.iterdir()] == ["trust.json"], "no temporary file left"


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "project" / "settings.json"
    write_atomically(path, "old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomically(path, "half \udcff")  # a lone surrogate cannot be encoded
    assert path.read_text() == "old\n"
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]
    assert path.stat().st_mode & 0o777 == 0o600
