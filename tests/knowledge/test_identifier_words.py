"""`identifier_words` compiled (`_words.c`) gives exactly what the Python reference gives.

The FTS `idents` column is filled by the C function where the install could build it and
by `identifier_words_py` elsewhere; an index built on one machine is searched the same
way on another, so the two must agree on every text, not only on typical code.
"""

from __future__ import annotations

import importlib.util
import shutil
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aistack_tui.knowledge import chunks
from aistack_tui.knowledge.chunks import identifier_words_py

try:
    from aistack_tui.knowledge import _words as compiled
except ImportError:  # installed without a C compiler: the install test below says so
    compiled = None  # type: ignore[assignment]
built = pytest.mark.skipif(compiled is None, reason="aistack_tui.knowledge._words not built")

# Letters, digits and underscores dominate, as in code; the rest are the boundaries
# and oddities an identifier can meet: other ASCII, accented and CJK letters, emoji.
_CHARS = st.sampled_from(
    list("aAbBzZxXyY09_") * 4 + list(" \n\t.,()[]{}:=-+*/'\"#$@!?<>") + list("éÉßñ漢字😀\u0301")
)


@built
def test_the_compiled_function_is_the_one_in_use() -> None:
    assert chunks.identifier_words is compiled.identifier_words


@built
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("parseHTTPRequest(read_fileV2)", "parse http request read file v2"),
        ("HTTPServer HTTP_OK getX x", "http server get x"),
        ("éparseConfig 3dModel _privateThing Ab_Cd", "parse config private thing"),
        ("parseConfig parseConfig readConfig", "parse config read"),
        ("ALLCAPS Config lower snake_case_name", ""),
        ("", ""),
    ],
)
def test_known_texts(text: str, words: str) -> None:
    assert compiled.identifier_words(text) == identifier_words_py(text) == words


@built
@settings(max_examples=3000, deadline=None)
@given(st.text(_CHARS, max_size=120))
def test_the_compiled_function_agrees_with_the_reference(text: str) -> None:
    assert compiled.identifier_words(text) == identifier_words_py(text)


@built
def test_it_agrees_on_real_source_files() -> None:
    """Every Python file of the standard library (CPython's own mixed-style names,
    non-ASCII text, long files), whole and a line at a time."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(stdlib.glob("*.py"))[:400]
    assert len(files) > 100
    for path in files:
        text = path.read_text("utf-8", errors="replace")
        assert compiled.identifier_words(text) == identifier_words_py(text), path
        for line in text.splitlines()[:200]:
            assert compiled.identifier_words(line) == identifier_words_py(line), line


@built
def test_it_rejects_what_is_not_text() -> None:
    with pytest.raises(TypeError):
        compiled.identifier_words(b"parseConfig")  # type: ignore[arg-type]


def test_the_install_builds_it_where_a_compiler_is_at_hand() -> None:
    """`setup.py` marks the extension optional so an install without a compiler goes on;
    where one is at hand, a silent build failure would cost every first index its speed."""
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not (shutil.which("cc") or shutil.which("gcc")) or not headers.exists():
        pytest.skip("no C compiler or Python headers here: the Python function is used")
    assert importlib.util.find_spec("aistack_tui.knowledge._words") is not None


@built
def test_thousands_of_distinct_identifiers_in_one_text() -> None:
    """Past the sets' first sizes: every identifier and word is still kept once."""
    text = " ".join(f"someIdent{i}Name_{i}X parseHTTP{i}Request" for i in range(3000))
    words = compiled.identifier_words(text)
    assert words == identifier_words_py(text)
    assert len(words.split()) == len(set(words.split())) > 6000
