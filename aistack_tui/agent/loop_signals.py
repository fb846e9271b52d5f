"""The values the turn loop passes between its own steps, apart from agent events.

Each step of `Agent.run` is an async generator that yields events for the front ends
and, last, one of these to tell the loop what happened; a marker is a final class, so
telling it from an event is plain to the type checker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from aistack_tui.llm import types as lt

DONE = object()
"""Put on a step's queue when the work behind it has finished."""
INTERRUPTED = object()
"""Put on a step's queue by `Agent.interrupt`, to wake the loop waiting on it."""


class BreakerTrippedError(Exception):
    """The provider failed `failures` times in a row: switch to the fallback model."""

    def __init__(self, error: Exception, failures: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.failures = failures


class PromptBlockedError(Exception):
    """A UserPromptSubmit hook blocked the prompt: the run ends before any request."""


@final
class GoesOn:
    """The last item of `Agent._after_answer` when the loop takes another turn."""


@final
@dataclass(frozen=True, slots=True)
class ToolFailures:
    """The last item of `Agent._answer_calls`: calls that failed on their own, 0 for none."""

    count: int


@final
@dataclass(frozen=True, slots=True)
class ToolResults:
    """The last item of `Agent._run_tools`: the results of its calls (final, so telling it from
    an event is plain to the type checker)."""

    blocks: list[lt.ToolResultBlock]
