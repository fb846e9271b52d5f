"""A tool call that will fail anyway returns its error to the model without asking the
user to approve it first."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.widgets.entries import ToolEntry
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import wait_for
from tests.tui.test_app import answered, entries, type_and_send


def tool_result(fake_llm: FakeLLMServer) -> str:
    """The tool result the model received in its last request."""
    last = fake_llm.model_requests[-1].body["messages"][-1]["content"]
    return str([b for b in last if b.get("type") == "tool_result"])


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ([ToolCall("Edit", {"file_path": "a.py", "old_string": "return 1",
                            "new_string": "return 2"})], "has not been read"),
        ([ToolCall("Read", {"file_path": "a.py"}),
          ToolCall("Edit", {"file_path": "a.py", "old_string": "return 42",
                            "new_string": "return 2"})], "old_string was not found"),
        ([ToolCall("Write", {"file_path": "a.py", "content": "x = 1\n"})], "has not been read"),
        ([ToolCall("Edit", {"file_path": "missing.py", "old_string": "a",
                            "new_string": "b"})], "does not exist"),
        ([ToolCall("Read", {"file_path": "/nonexistent-dir-h14/notes.txt"})], "does not exist"),
    ],
    ids=["edit-unread", "old-string-missing", "write-unread", "edit-missing-file",
         "read-missing-outside"],
)
async def test_a_call_that_cannot_succeed_is_not_asked_about(
    make_app, git_repo: Path, fake_llm: FakeLLMServer, calls: list[ToolCall], expected: str
) -> None:
    (git_repo / "a.py").write_text("def f():\n    return 1\n")
    app = make_app(*[Turn(tool_calls=[call]) for call in calls], Turn(text="Noted."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "change a")

        def done() -> bool:
            assert not isinstance(app.screen, ConfirmScreen), "asked about a failing call"
            return answered(app, "Noted.")

        await wait_for(pilot, done)
        assert expected in tool_result(fake_llm)
        card = [e for e in entries(app) if isinstance(e, ToolEntry)][-1]
        assert card.state == "failed"
    assert (git_repo / "a.py").read_text() == "def f():\n    return 1\n"
