"""`ast.parse` for the tests that read the source tree.

CPython 3.11 (before 3.11.9) keeps the AST constructor's recursion counter in state that
all threads share (gh-106905): a thread building an AST at the same moment, such as a
background thread formatting a traceback (3.11's traceback module parses the failing line
to place its carets), makes a correct parse fail with `SystemError: AST constructor
recursion depth mismatch`. The parse is then simply repeated.
"""

from __future__ import annotations

import ast

_ATTEMPTS = 5


def parse_source(source: str) -> ast.Module:
    for attempt in range(_ATTEMPTS):
        try:
            return ast.parse(source)
        except SystemError as e:
            if "recursion depth mismatch" not in str(e) or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
