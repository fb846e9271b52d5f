"""A separate process writing memories (for the two-writers test): `python -m
tests.memory.write_worker HOME PROJECT TAG COUNT`."""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path

from aistack_tui.memory.manager import MemoryManager
from aistack_tui.storage.hashing_embedder import HashingEmbedder


async def main(home: Path, project: Path, tag: str, count: int) -> None:
    manager = await MemoryManager.open(home, project, HashingEmbedder(), background=False)
    try:
        for i in range(count):
            # Distinct hex words per item, so no two items are near-duplicates.
            words = hashlib.sha256(f"{tag}/{i}".encode()).hexdigest()
            await manager.write(f"{tag} fact {words[:16]} {words[16:32]}", source="test")
    finally:
        await manager.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
