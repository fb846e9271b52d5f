"""Regular expressions compiled on first use instead of at import.

The permission modules hold a few dozen patterns (secret masking, prompt-injection flags,
dangerous commands). Compiling them all at import costs every start-up, including a print
run whose model never calls a tool; `lazy(...)` defers each one to its first match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator


class LazyPattern:
    """A stand-in for `re.compile(pattern, flags)` that compiles when first used."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str | Callable[[], str], flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            source = self._pattern if isinstance(self._pattern, str) else self._pattern()
            self._compiled = re.compile(source, self._flags)
        return self._compiled

    def search(self, string: str, pos: int = 0) -> re.Match[str] | None:
        return self.compiled.search(string, pos)

    def match(self, string: str, pos: int = 0) -> re.Match[str] | None:
        return self.compiled.match(string, pos)

    def fullmatch(self, string: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(string)

    def findall(self, string: str) -> list[str]:
        return self.compiled.findall(string)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)


def lazy(pattern: str | Callable[[], str], flags: int = 0) -> LazyPattern:
    """`re.compile` deferred to the first use; `pattern` may be a function building it."""
    return LazyPattern(pattern, flags)
