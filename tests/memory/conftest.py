"""A MemoryManager on a fresh `$AISTACK_HOME/aistack.db` with the offline embedder."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.memory.manager import MemoryManager
from aistack_tui.storage.hashing_embedder import HashingEmbedder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
async def memory(aistack_home: Path, project: Path) -> AsyncIterator[MemoryManager]:
    manager = await MemoryManager.open(aistack_home, project, HashingEmbedder(), background=False)
    try:
        yield manager
    finally:
        await manager.close()
