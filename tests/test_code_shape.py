"""The code stays in pieces a newcomer can read: no module over 600 lines, no function
over cyclomatic complexity 25 (as radon counts it). A module or function that grows past
either is split by responsibility, or its cases become a table."""

from __future__ import annotations

from pathlib import Path

import pytest
from radon.complexity import cc_visit_ast

from tests.python_ast import parse_source

PACKAGE = Path(__file__).resolve().parents[1] / "aistack_tui"
MAX_LINES = 600
MAX_COMPLEXITY = 25
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "evals/tasks" not in p.as_posix())


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in SOURCES
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


@pytest.mark.parametrize("package", sorted({p.relative_to(PACKAGE).parts[0] for p in SOURCES}))
def test_no_function_is_over_complexity_25(package: str) -> None:
    complex_ = {
        f"{p.relative_to(PACKAGE)}:{block.lineno} {block.fullname}": block.complexity
        for p in SOURCES
        if p.relative_to(PACKAGE).parts[0] == package
        for block in cc_visit_ast(parse_source(p.read_text(encoding="utf-8")))
        if block.complexity > MAX_COMPLEXITY
    }
    assert complex_ == {}
