"""The chunker compiled (`_chunks.c`) gives exactly the chunks the Python reference gives.

`build_chunks` and `window_chunks` are the C functions where the install could build
them and `build_chunks_py` / `window_chunks_py` elsewhere; an index is searched the same
way whichever made it, so the two must agree on every input: the same chunks, lines,
symbols, kinds, texts and identifier words, in the same order.
"""

from __future__ import annotations

import importlib.util
import pickle
import shutil
import subprocess
import sys
import sysconfig
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aistack_tui.knowledge import chunks
from aistack_tui.knowledge import extract as extract_module
from aistack_tui.knowledge.chunks import (
    MAX_CHUNK_CHARS,
    MAX_CHUNK_LINES,
    WINDOW_LINES,
    build_chunks_py,
    window_chunks_py,
)
from aistack_tui.knowledge.extract import extract
from aistack_tui.knowledge.types import Chunk, Definition
from bench.knowledge_tree import generate_tree

try:
    from aistack_tui.knowledge import _words as compiled
except ImportError:  # installed without a C compiler: the install test below says so
    compiled = None  # type: ignore[assignment]
built = pytest.mark.skipif(
    compiled is None or not hasattr(compiled, "build_chunks"),
    reason="aistack_tui.knowledge._words (with the chunker) not built",
)

# Code-like pieces, the whitespace str.strip() removes (ASCII and Unicode: \x85, \xa0,
# \u3000, ...), and characters of every width: Latin-1, CJK, emoji, a combining mark.
_PIECES = st.sampled_from(
    list("aAbBzZxY09_") * 3
    + list(" \t.,()[]{}:=#\"'")
    + ["parseConfig", "HTTPServer", "get_userId", "def ", "class "]
    + [" ", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "\u200b"]
    + list("éß漢字😀\u0301")
)
_TEXT = st.lists(_PIECES, max_size=14).map("".join)
_BLANK = st.sampled_from(["", " ", "\t\t", "\u3000", "\x85", " \xa0 ", "\u2028"])
_LINE = st.one_of(
    _TEXT,
    _TEXT,
    _BLANK,
    # Longer than a chunk may be: cut at MAX_CHUNK_CHARS, whatever the characters' width.
    st.builds(lambda piece, n: piece * n, st.lists(_PIECES, min_size=1, max_size=8).map("".join),
              st.integers(MAX_CHUNK_CHARS // 8, MAX_CHUNK_CHARS // 2)),
)  # fmt: skip
_KINDS = st.sampled_from(["function", "class", "method", "heading", "struct", "module"])
_NAMES = st.sampled_from(["", "f", "parseConfig", "Outer.innerMethod", "A > B", "漢字", "x\ny"])


@st.composite
def _lines(draw: st.DrawFn, max_lines: int = 260) -> list[str]:
    # Mostly short files with many definitions, some long enough to be split; their
    # lines drawn from a few (drawing each line afresh made the test ten times slower).
    count = draw(st.one_of(st.integers(0, 30), st.integers(0, max_lines)))
    pool = draw(st.lists(_LINE, min_size=1, max_size=12))
    picks = st.integers(0, len(pool) - 1)
    return [pool[i] for i in draw(st.lists(picks, min_size=count, max_size=count))]


@st.composite
def _definitions(draw: st.DrawFn, line_count: int) -> list[Definition]:
    """Nested, overlapping, zero-length, inverted and out-of-range definitions, sorted
    as `extract` sorts them (or not, see the test)."""
    last = line_count + 3
    found: list[Definition] = []
    for _ in range(draw(st.integers(0, 25))):
        start = draw(st.integers(-2, last))
        length = draw(st.one_of(st.integers(-3, 5), st.integers(0, 3 * MAX_CHUNK_LINES)))
        chunk_start = draw(st.one_of(st.just(0), st.integers(-1, last)))
        found.append(Definition(
            name="n", qualname=draw(_NAMES), kind=draw(_KINDS), start_line=start,
            end_line=start + length, chunk_start=chunk_start,
        ))  # fmt: skip
    return found


def _order(definitions: list[Definition]) -> list[Definition]:
    return sorted(definitions, key=lambda d: (d.chunk_start or d.start_line, -d.end_line))


@built
def test_the_compiled_chunker_is_the_one_in_use() -> None:
    assert chunks.build_chunks is compiled.build_chunks
    assert chunks.window_chunks is compiled.window_chunks
    assert extract_module.build_chunks is compiled.build_chunks


def test_the_install_builds_it_where_a_compiler_is_at_hand() -> None:
    """As for `identifier_words`: a silent build failure would cost every first index."""
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not (shutil.which("cc") or shutil.which("gcc")) or not headers.exists():
        pytest.skip("no C compiler or Python headers here: the Python chunker is used")
    assert importlib.util.find_spec("aistack_tui.knowledge._words") is not None
    assert compiled is not None and hasattr(compiled, "build_chunks")


@built
@settings(max_examples=600, deadline=None)
@given(st.data(), _lines(), st.sampled_from(["python", "markdown", "go"]), st.booleans())
def test_build_chunks_agrees_with_the_reference(
    data: st.DataObject, lines: list[str], language: str, sort: bool
) -> None:
    definitions = data.draw(_definitions(len(lines)))
    if sort:  # as extract() passes them; unsorted, both nest the same (odd) way
        definitions = _order(definitions)
    expected = build_chunks_py(lines, definitions, language)
    assert compiled.build_chunks(lines, definitions, language) == expected


@built
@settings(max_examples=300, deadline=None)
@given(_lines(max_lines=400))
def test_window_chunks_agrees_with_the_reference(lines: list[str]) -> None:
    assert compiled.window_chunks(lines) == window_chunks_py(lines)


@built
def test_known_cases() -> None:
    body = [f"    x{i} = parseValue{i}()" for i in range(200)]
    lines = ["import os", "", "", "def big():", *body, "", "", "def small():", "    return 1"]
    definitions = [
        Definition("big", "big", "function", 4, 204),
        Definition("small", "small", "function", 207, 208),
    ]
    got = compiled.build_chunks(lines, definitions, "python")
    assert got == build_chunks_py(lines, definitions, "python")
    assert [(c.start_line, c.end_line, c.symbol, c.kind) for c in got] == [
        (1, 1, "", "module"), (4, 63, "big", "function"), (64, 123, "big", "function"),
        (124, 183, "big", "function"), (184, 204, "big", "function"),
        (207, 208, "small", "function"),
    ]  # fmt: skip
    assert got[1].idents.startswith("parse value0 value1 ")
    assert type(got[0]) is Chunk and pickle.loads(pickle.dumps(got)) == got
    # Markdown: a section with subsections is split at them, however short.
    md = ["# A", "intro", "## B", "text"]
    headings = [Definition("A", "A", "heading", 1, 4), Definition("B", "A > B", "heading", 3, 4)]
    got = compiled.build_chunks(md, headings, "markdown")
    assert got == build_chunks_py(md, headings, "markdown")
    assert [(c.start_line, c.symbol) for c in got] == [(1, "A"), (3, "A > B")]
    assert compiled.build_chunks([], headings, "markdown") == []
    assert compiled.window_chunks([]) == []


@built
def test_a_text_cut_inside_a_wide_character_run_is_a_normal_str() -> None:
    """A chunk cut at MAX_CHUNK_CHARS keeps the width its kept characters need: a str one
    kind too wide would compare unequal to the same text."""
    lines = ["a" * (MAX_CHUNK_CHARS - 1) + "漢字", "😀", "x"]
    text = compiled.window_chunks(lines)[0].text
    assert text == "a" * (MAX_CHUNK_CHARS - 1) + "漢" and text.isascii() is False
    lines = ["a" * MAX_CHUNK_CHARS + "漢字"]
    text = compiled.window_chunks(lines)[0].text
    assert text == "a" * MAX_CHUNK_CHARS and text.isascii()
    assert text == window_chunks_py(lines)[0].text


@built
def test_deep_nesting_is_not_bounded_by_the_stack() -> None:
    """Each nesting level is a recursion in Python (RecursionError deep enough); the C
    walks a heap stack, so a pathological file still gets its chunks."""
    depth = 20_000
    lines = [f"l{i}" for i in range(2 * depth + 200)]
    definitions = [
        Definition("d", f"d{i}", "function", i + 1, len(lines) - i) for i in range(depth)
    ]
    got = compiled.build_chunks(lines, definitions, "python")
    assert [c.start_line for c in got] == sorted(c.start_line for c in got)
    assert sum(c.end_line - c.start_line + 1 for c in got) == len(lines)


@built
def test_limits_come_from_chunks_py() -> None:
    lines = [f"line {i}" for i in range(WINDOW_LINES * 2 + 1)]
    assert [(c.start_line, c.end_line) for c in compiled.window_chunks(lines)] == [
        (1, WINDOW_LINES), (WINDOW_LINES + 1, 2 * WINDOW_LINES), (2 * WINDOW_LINES + 1,) * 2,
    ]  # fmt: skip


@built
def test_it_agrees_on_a_generated_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file of the benchmark's tree (every language it generates), extracted with
    the C chunker and again with the Python one."""
    counts = generate_tree(tmp_path, sources=300, seed=7)
    assert len({lang for _, lang in counts.source_paths}) >= 10
    files = [((tmp_path / path).read_bytes(), lang) for path, lang in counts.source_paths]
    compiled_results = [extract(data, lang, references=False) for data, lang in files]
    monkeypatch.setattr(extract_module, "build_chunks", build_chunks_py)
    monkeypatch.setattr(extract_module, "window_chunks", window_chunks_py)
    for (data, lang), result in zip(files, compiled_results, strict=True):
        assert result == extract(data, lang, references=False), lang
    assert sum(len(r.chunks) for r in compiled_results) > 2000


@built
def test_it_agrees_on_the_standard_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real Python: long files, big classes split at their methods, non-ASCII text; and
    each file again as plain text (window chunks)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("*/*.py"))[::3]
    assert len(files) > 200
    sources = [path.read_bytes() for path in files]
    compiled_results = [extract(data, "python", references=False) for data in sources]
    monkeypatch.setattr(extract_module, "build_chunks", build_chunks_py)
    for path, data, result in zip(files, sources, compiled_results, strict=True):
        assert result == extract(data, "python", references=False), path
        lines = data.decode("utf-8", "replace").splitlines()
        assert compiled.window_chunks(lines) == window_chunks_py(lines), path


@built
def test_bad_arguments_are_type_errors() -> None:
    good = [Definition("f", "f", "function", 1, 2)]
    with pytest.raises(TypeError):
        compiled.build_chunks(("a", "b"), good, "python")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compiled.build_chunks(["a", b"b"], good, "python")  # type: ignore[list-item]
    with pytest.raises(AttributeError):  # as in Python
        compiled.build_chunks(["a", "b"], [object()], "python")  # type: ignore[list-item]
    with pytest.raises(TypeError):
        compiled.build_chunks(["a"], 3, "python")  # type: ignore[arg-type]
    bad_line = Definition("f", "f", "function", "1", 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compiled.build_chunks(["a", "b"], [bad_line], "python")
    bad_name = Definition("f", None, "function", 1, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compiled.build_chunks(["a", "b"], [bad_name], "python")
    with pytest.raises(TypeError):
        compiled.window_chunks(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compiled.build_chunks(["a"], good)  # type: ignore[call-arg]
    # A definition outside the file is never read further, as in Python.
    outside = Definition("f", None, "function", 9, 10)  # type: ignore[arg-type]
    assert compiled.build_chunks(["a"], [outside], "python") == build_chunks_py(
        ["a"], [outside], "python"
    )


@built
def test_configure_refuses_a_chunk_class_it_does_not_know() -> None:
    with pytest.raises(TypeError):
        compiled.configure(Definition, MAX_CHUNK_LINES, WINDOW_LINES, MAX_CHUNK_CHARS)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive"):
        compiled.configure(Chunk, MAX_CHUNK_LINES, 0, MAX_CHUNK_CHARS)
    # Still configured as chunks.py left it.
    assert compiled.window_chunks(["a"]) == window_chunks_py(["a"])


@built
def test_no_memory_is_kept_per_call() -> None:
    """Successful and failing calls, repeated: what the C allocates (PyMem, traced by
    tracemalloc) and the objects it makes are all freed."""
    lines = [f"    value{i} = parseThing{i % 7}(x)  # 漢字" for i in range(300)]
    definitions = [
        Definition("f", f"Outer.method{i}", "method", 10 * i + 1, 10 * i + 120) for i in range(25)
    ]
    bad = [*definitions, Definition("f", None, "function", 1, 2)]  # type: ignore[arg-type]

    def calls() -> None:
        for _ in range(40):
            compiled.build_chunks(lines, definitions, "python")
            compiled.window_chunks(lines)
            with pytest.raises(TypeError):
                compiled.build_chunks(lines, bad, "python")

    calls()
    tracemalloc.start()
    try:
        calls()
        before, _ = tracemalloc.get_traced_memory()
        calls()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 2000


def test_without_the_extension_the_python_chunker_runs() -> None:
    """Where `_words` could not be built (or predates the chunker), chunks.py imports and
    uses its own functions."""
    script = (
        "import sys; sys.modules['aistack_tui.knowledge._words'] = None\n"
        "from aistack_tui.knowledge import chunks\n"
        "assert chunks.build_chunks is chunks.build_chunks_py\n"
        "assert chunks.window_chunks is chunks.window_chunks_py\n"
        "assert chunks.identifier_words is chunks.identifier_words_py\n"
        "assert chunks.window_chunks(['parseThis']).pop().idents == 'parse this'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
