"""A ToolContext rooted in a fresh project directory for every tool test."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.tools.base import ToolContext


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def ctx(project: Path, tmp_path: Path) -> ToolContext:
    return ToolContext(project_root=project, cwd=project, home=tmp_path / "user-home")
