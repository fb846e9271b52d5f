"""repair_history: what a crashed or interrupted session sends on resume."""

from __future__ import annotations

from aistack_tui.agent.history import NOT_RUN, repair_history
from aistack_tui.llm.types import Message, TextBlock, ToolResultBlock, ToolUseBlock


def call(i: str) -> ToolUseBlock:
    return ToolUseBlock(id=i, name="Read", input={"file_path": "x"})


def test_unanswered_calls_get_error_results() -> None:
    history = [Message.user("go"), Message(role="assistant", content=[call("a"), call("b")]),
               Message.user("next prompt")]
    fixed = repair_history(history)
    assert [m.role for m in fixed] == ["user", "assistant", "user"]
    results = fixed[2].tool_results()
    assert [r.tool_use_id for r in results] == ["a", "b"]
    assert all(r.is_error and r.text() == NOT_RUN for r in results)
    assert fixed[2].content[-1] == TextBlock(text="next prompt")


def test_partially_answered_calls_are_completed_results_first() -> None:
    history = [Message.user("go"), Message(role="assistant", content=[call("a"), call("b")]),
               Message(role="user", content=[ToolResultBlock(tool_use_id="a", content="ok")])]
    fixed = repair_history(history)
    assert sorted(r.tool_use_id for r in fixed[2].tool_results()) == ["a", "b"]


def test_consecutive_user_messages_merge_with_results_first() -> None:
    history = [Message.user("go"), Message(role="assistant", content=[call("a")]),
               Message(role="user", content=[ToolResultBlock(tool_use_id="a", content="ok")]),
               Message.user("continue please")]
    fixed = repair_history(history)
    assert [m.role for m in fixed] == ["user", "assistant", "user"]
    assert isinstance(fixed[2].content[0], ToolResultBlock)
    assert fixed[2].content[1] == TextBlock(text="continue please")


def test_trailing_assistant_call_gets_results_message() -> None:
    fixed = repair_history([Message.user("go"), Message(role="assistant", content=[call("z")])])
    assert fixed[-1].role == "user" and fixed[-1].tool_results()[0].tool_use_id == "z"


def test_valid_history_unchanged() -> None:
    history = [Message.user("hi"), Message(role="assistant", content=[TextBlock(text="yo")])]
    assert repair_history(history) == history
