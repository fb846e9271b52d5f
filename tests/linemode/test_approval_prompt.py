"""The line mode's approve/deny question, answered through prompt_toolkit's pipe input."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Iterator

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.linemode.approval_prompt import AskFeedback, LineApprover, parse_answer
from aistack_tui.linemode.render import LineRenderer
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.llm import types as lt
from aistack_tui.permissions.types import Decision
from aistack_tui.settings.trust import TrustItem
from aistack_tui.tools.base import ToolCallDisplay
from aistack_tui.tools.diffs import file_diff

RED, GREEN = "\x1b[31m", "\x1b[32m"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
DIFF = file_diff("calc.py", "def add(a, b):\n    return a - b\n",
                    "def add(a, b):\n    return a + b\n")


def edit_request(rule: str | None = "Edit(./calc.py)") -> ApprovalRequest:
    return ApprovalRequest(
        "toolu_1", "Edit",
        {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"},
        Decision("ask", "mode default: edits need approval", suggested_rule=rule,
                 warnings=("calc.py is tracked by git",)),
        ToolCallDisplay(summary="Edit calc.py", diff=DIFF),
    )


class Harness:
    def __init__(self, pipe: PipeInput) -> None:
        self.pipe = pipe
        self.out = io.StringIO()
        console = Console(file=self.out, width=100, force_terminal=True,
                          color_system="standard", _environ={"TERM": "xterm"})
        self.renderer = LineRenderer(console, live=False)
        self.interrupts = 0
        self.approver = LineApprover(LineIO(console, pipe, DummyOutput()), self.renderer,
                                     on_interrupt=self.interrupted)

    def interrupted(self) -> None:
        self.interrupts += 1

    @property
    def text(self) -> str:
        return ANSI.sub("", self.out.getvalue())


@pytest.fixture
def harness() -> Iterator[Harness]:
    with create_pipe_input() as pipe:
        yield Harness(pipe)


@pytest.mark.parametrize(
    ("typed", "has_rule", "expected"),
    [
        ("y", True, ApprovalDecision("once")),
        ("YES", False, ApprovalDecision("once")),
        ("1", False, ApprovalDecision("once")),
        ("a", True, ApprovalDecision("session")),
        ("2", True, ApprovalDecision("session")),
        ("s", True, ApprovalDecision("save")),
        ("3", True, ApprovalDecision("save")),
        ("a", False, None),  # no rule to remember: only yes or no
        ("s", False, None),
        ("n", True, AskFeedback()),
        ("4", True, AskFeedback()),
        ("n use ruff instead", True, ApprovalDecision("reject", "use ruff instead")),
        ("no, not that file", False, ApprovalDecision("reject", "not that file")),
        ("yes please", True, None),
        ("", True, None),
        ("maybe", True, None),
    ],
)
def test_parse_answer(typed: str, has_rule: bool, expected: object) -> None:
    assert parse_answer(typed, has_rule=has_rule) == expected


async def test_y_approves_once_and_the_diff_is_coloured(harness: Harness) -> None:
    harness.pipe.send_text("y\r")
    assert await harness.approver.decide(edit_request()) == ApprovalDecision("once")
    raw = harness.out.getvalue()
    assert re.search(re.escape(RED) + r"-    return a - b", raw)
    assert re.search(re.escape(GREEN) + r"\+    return a \+ b", raw)
    text = harness.text
    assert "? Allow Edit calc.py" in text
    assert "mode default: edits need approval" in text
    assert "⚠ calc.py is tracked by git" in text
    assert "calc.py  +1 -1" in text
    assert "don't ask again for Edit(./calc.py) this session" in text


async def test_n_then_a_message_rejects_with_that_feedback(harness: Harness) -> None:
    harness.pipe.send_text("n\rkeep the subtraction, fix the test\r")
    decision = await harness.approver.decide(edit_request())
    assert decision == ApprovalDecision("reject", "keep the subtraction, fix the test")


async def test_n_then_enter_rejects_without_feedback(harness: Harness) -> None:
    harness.pipe.send_text("n\r\r")
    assert await harness.approver.decide(edit_request()) == ApprovalDecision("reject", "")


async def test_session_and_save_answers(harness: Harness) -> None:
    harness.pipe.send_text("a\r")
    assert await harness.approver.decide(edit_request()) == ApprovalDecision("session")
    harness.pipe.send_text("s\r")
    assert await harness.approver.decide(edit_request()) == ApprovalDecision("save")


async def test_an_answer_that_is_not_offered_asks_again(harness: Harness) -> None:
    harness.pipe.send_text("a\rwhat?\ry\r")
    assert await harness.approver.decide(edit_request(rule=None)) == ApprovalDecision("once")
    assert harness.text.count("answer y or n") == 2
    assert "don't ask again" not in harness.text


async def test_ctrl_c_rejects_and_interrupts_the_turn(harness: Harness) -> None:
    harness.pipe.send_text("\x03")
    assert await harness.approver.decide(edit_request()) == ApprovalDecision("reject")
    assert harness.interrupts == 1


async def test_a_bash_call_shows_its_command(harness: Harness) -> None:
    harness.pipe.send_text("y\r")
    request = ApprovalRequest(
        "toolu_2", "Bash", {"command": "rm -rf build && make"},
        Decision("ask", "Bash asks in default mode"), ToolCallDisplay(summary="Bash rm -rf build"),
    )
    await harness.approver.decide(request)
    assert "rm -rf build && make" in harness.text


async def test_events_during_the_question_wait_until_it_is_answered(harness: Harness) -> None:
    renderer = harness.renderer
    renderer.begin_run()
    renderer.handle(ev.ToolCallRequested("toolu_1", "Edit", {}, ToolCallDisplay("Edit calc.py")))
    renderer.handle(ev.ToolCallRequested("toolu_r", "Read", {}, ToolCallDisplay("Read b.py")))
    decision = asyncio.ensure_future(harness.approver.decide(edit_request()))
    for _ in range(100):
        if "allow?" in harness.text or renderer.holding:
            break
        await asyncio.sleep(0.01)
    # A parallel read finishes while the question is open: held back, not printed.
    result = lt.ToolResultBlock(tool_use_id="toolu_r", content="ok")
    renderer.handle(ev.ToolFinished("toolu_r", "Read", result, 0.01))
    await asyncio.sleep(0.05)
    assert "Read b.py ✓" not in harness.text
    harness.pipe.send_text("y\r")
    assert await decision == ApprovalDecision("once")
    assert harness.text.index("Read b.py ✓") > harness.text.index("? Allow Edit calc.py")


async def test_trust_question(harness: Harness) -> None:
    items = [TrustItem("mcp", "docs", "npx docs-server", "f1", ".mcp.json")]
    harness.pipe.send_text("y\r")
    assert await harness.approver.ask_trust(items) is True
    assert "MCP server docs" in harness.text and "npx docs-server" in harness.text
    harness.pipe.send_text("\x04")
    assert await harness.approver.ask_trust(items) is False
