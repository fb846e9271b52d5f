"""Recall of tree-sitter definitions against Universal Ctags on a real Python tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import textual

from aistack_tui.knowledge.extract import extract

CTAGS_KINDS = {"c", "f", "m"}  # class, function, member (method)


def _ctags_definitions(tree: Path) -> set[tuple[str, str, int]]:
    out = subprocess.run(
        [
            "ctags",
            "-R",
            "--languages=Python",
            "--kinds-Python=cfm",
            "--fields=+nK",
            "--output-format=xref",
            "--_xformat=%{name}\t%{input}\t%{line}\t%{kind}",
            "-f",
            "-",
            ".",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    found: set[tuple[str, str, int]] = set()
    for line in out.stdout.splitlines():
        name, path, lineno, _kind = line.split("\t")
        found.add((path.removeprefix("./"), name, int(lineno)))
    return found


@pytest.mark.skipif(shutil.which("ctags") is None, reason="Universal Ctags is not installed")
def test_recall_against_ctags_on_textual_is_at_least_95_percent() -> None:
    tree = Path(textual.__file__).parent
    version = subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout
    if "Universal Ctags" not in version:
        pytest.skip("ctags is not Universal Ctags (needs --_xformat)")
    expected = _ctags_definitions(tree)
    ours: set[tuple[str, str, int]] = set()
    files = sorted(tree.rglob("*.py"))
    for file in files:
        rel = file.relative_to(tree).as_posix()
        for d in extract(file.read_bytes(), "python").definitions:
            ours.add((rel, d.name, d.start_line))
    found = expected & ours
    recall = len(found) / len(expected)
    print(
        f"\nctags recall on {len(files)} textual files: {len(found)}/{len(expected)} = {recall:.3f}"
    )
    missing = sorted(expected - ours)[:10]
    assert len(expected) > 2000, "the tree should be real-sized"
    assert recall >= 0.95, f"recall {recall:.3f}; e.g. missing {missing}"
