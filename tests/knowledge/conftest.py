"""Fixtures for the knowledge tests: copies of the fixture repositories and open indexes."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.knowledge import KnowledgeIndex

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def bookshop(tmp_path: Path) -> Path:
    target = tmp_path / "bookshop"
    shutil.copytree(FIXTURES / "bookshop", target)
    return target


@pytest.fixture
async def bookshop_index(bookshop: Path, aistack_home: Path) -> AsyncIterator[KnowledgeIndex]:
    index = await KnowledgeIndex.open(aistack_home, bookshop)
    await index.refresh()
    yield index
    await index.close()
