"""Each run reports only its own tokens: the running total minus the snapshot taken when
the run began (Usage subtraction), across the several model calls of a tool loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.agent import events as ev
from aistack_tui.llm.types import Usage
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.agent.test_runtime import collect, start


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_turn_usage_is_this_runs_share_of_the_total(provider: str, git_repo: Path) -> None:
    (git_repo / "a.txt").write_text("alpha\n")
    script = [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})], usage=(100, 10)),
        Turn(text="read it", usage=(120, 5)),
        Turn(text="second", usage=(300, 7)),
    ]
    with FakeLLMServer(script) as server:
        session = await start(server, provider)
        first = await collect(session.agent.run("read a.txt"))
        second = await collect(session.agent.run("again"))
        await session.close()
    first_end, second_end = first[-1], second[-1]
    assert isinstance(first_end, ev.TurnEnded) and isinstance(second_end, ev.TurnEnded)
    assert first_end.usage == Usage(input_tokens=220, output_tokens=15)
    assert second_end.usage == Usage(input_tokens=300, output_tokens=7)
    assert session.agent.totals.usage == first_end.usage + second_end.usage
