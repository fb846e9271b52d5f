"""Split a streaming Markdown answer into blocks that are finished and a tail that is not.

A scrolling terminal cannot take back what it printed, so the line mode prints an answer
one finished block at a time (rendered by Rich) and keeps only the unfinished tail in a
small live region. A block is finished at a blank line outside a code fence, or at the
fence that closes a code block. A blank line followed by an indented line or another
list item does not end a block: cutting there would turn a list item's second paragraph
into a code block or restart a list's numbering, so the cut waits for the next line that
starts at the left margin.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")


@dataclass(slots=True)
class MarkdownBlocks:
    """Accumulates streamed text; `take_finished()` hands out each finished block once."""

    text: str = ""
    _cut: int = 0
    """Where the text not yet handed out starts."""

    def feed(self, delta: str) -> None:
        self.text += delta

    def take_finished(self) -> list[str]:
        """Blocks finished since the last call, without their separating blank lines."""
        pending = self.text[self._cut :]
        end = finished_prefix(pending)
        if end == 0:
            return []
        self._cut += end
        return split_blocks(pending[:end])

    @property
    def tail(self) -> str:
        """The text not yet handed out as a finished block."""
        return self.text[self._cut :]

    def take_rest(self) -> list[str]:
        """At the end of the answer everything left is finished."""
        rest = self.tail
        self._cut = len(self.text)
        return split_blocks(rest)

    def reset(self) -> None:
        self.text = ""
        self._cut = 0


def finished_prefix(text: str) -> int:
    """The length of the longest prefix of `text` that ends on a block boundary (0: none)."""
    cuts = boundaries(text)
    return cuts[-1] if cuts else 0


def boundaries(text: str) -> list[int]:
    """Offsets in `text` where one finished block ends and the next begins.

    Only lines ending in a newline count: the last piece may still grow.
    """
    cuts: list[int] = []
    fence: str | None = None
    offset = 0
    last_was_list = False
    after_blank = False
    seen_text = False
    for line in text.split("\n")[:-1]:
        line_end = offset + len(line) + 1
        match = _FENCE.match(line)
        if fence is not None:
            closing = match is not None and match.group(1)[0] == fence[0]
            if closing and match is not None and len(match.group(1)) >= len(fence):
                fence = None
                if not line[match.end() :].strip():
                    cuts.append(line_end)
                    after_blank = last_was_list = False
        elif not line.strip():
            after_blank = seen_text
        else:
            if after_blank:
                continues = line[:1] in (" ", "\t") or (
                    last_was_list and _LIST_ITEM.match(line) is not None
                )
                if not continues:
                    cuts.append(offset)  # the blank lines before this one end the block
                after_blank = False
            seen_text = True
            if match:
                fence = match.group(1)
                last_was_list = False
            else:
                last_was_list = _LIST_ITEM.match(line) is not None or (
                    last_was_list and line[:1] in (" ", "\t")
                )
        offset = line_end
    return cuts


def split_blocks(text: str) -> list[str]:
    """`text` (complete) cut into blocks, blank edges stripped, empty blocks dropped."""
    complete = text if text.endswith("\n") else text + "\n"
    edges = [0, *boundaries(complete), len(complete)]
    blocks = [complete[a:b].strip("\n") for a, b in itertools.pairwise(edges)]
    return [b for b in blocks if b.strip()]
