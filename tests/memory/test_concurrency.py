"""Two processes (say a TUI and a print-mode run) writing to one database lose nothing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from aistack_tui.memory.manager import MemoryManager
from aistack_tui.storage.hashing_embedder import HashingEmbedder

COUNT = 60
ROOT = Path(__file__).resolve().parents[2]


async def test_two_processes_writing_at_once_lose_no_write(aistack_home: Path,
                                                          project: Path) -> None:
    # Create the schema first, as the first process to start would.
    first = await MemoryManager.open(aistack_home, project, HashingEmbedder(), background=False)
    await first.close()
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.memory.write_worker", str(aistack_home), str(project),
            tag, str(COUNT), cwd=ROOT, stderr=asyncio.subprocess.PIPE,
        )
        for tag in ("tui", "print")
    ]
    results = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), 60)
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err.decode()
    manager = await MemoryManager.open(aistack_home, project, HashingEmbedder(), background=False)
    try:
        records = await manager.list(limit=1000)
        assert sum(r.content.startswith("tui fact") for r in records) == COUNT
        assert sum(r.content.startswith("print fact") for r in records) == COUNT
        cur = await manager.store.db.execute("SELECT COUNT(*) FROM memory_vectors")
        assert (await cur.fetchone())[0] == 2 * COUNT
    finally:
        await manager.close()
