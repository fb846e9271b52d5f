"""Write, retrieval and budget policies, and the context block built from them."""

from __future__ import annotations

from aistack_tui.llm.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from aistack_tui.memory.manager import MemoryManager
from aistack_tui.memory.policies import BudgetPolicy, Section, WritePolicy


def _assistant(*blocks: TextBlock | ToolUseBlock) -> Message:
    return Message(role="assistant", content=list(blocks))


def _results(*blocks: ToolResultBlock) -> Message:
    return Message(role="user", content=list(blocks))


def test_user_corrections_are_extracted() -> None:
    turn = [
        Message.user("We deploy with fly.io, never heroku. Also, always use pnpm. "
                     "I prefer short answers. Can you fix the login page?"),
        _assistant(TextBlock(text="Sure.")),
    ]
    found = {e.content: e for e in WritePolicy().extract(turn)}
    assert found["We deploy with fly.io, never heroku."].kind == "semantic"
    assert found["Always use pnpm."].importance == 0.9
    assert found["I prefer short answers."].kind == "profile"
    assert not any("login page" in c for c in found if not c.startswith("User asked"))
    events = [e for e in found.values() if e.kind == "episodic"]
    assert len(events) == 1 and "answer: Sure." in events[0].content


def test_an_error_and_its_fix_are_remembered() -> None:
    run1 = ToolUseBlock(id="t1", name="Bash", input={"command": "pytest tests/test_upload.py"})
    edit = ToolUseBlock(id="t2", name="Edit", input={"file_path": "tests/test_upload.py",
                                                     "old_string": "a", "new_string": "b"})
    run2 = ToolUseBlock(id="t3", name="Bash", input={"command": "pytest tests/test_upload.py"})
    turn = [
        Message.user("the upload test is flaky"),
        _assistant(run1),
        _results(ToolResultBlock(tool_use_id="t1", is_error=True,
                                 content="E   TimeoutError: multipart upload not complete")),
        _assistant(edit),
        _results(ToolResultBlock(tool_use_id="t2", content="ok")),
        _assistant(run2),
        _results(ToolResultBlock(tool_use_id="t3", content="1 passed")),
        _assistant(TextBlock(text="Fixed: we now wait for the multipart upload.")),
    ]
    fixes = [e for e in WritePolicy().extract(turn) if e.content.startswith("Error fixed")]
    assert len(fixes) == 1
    assert "TimeoutError: multipart upload not complete" in fixes[0].content
    assert "Edit tests/test_upload.py" in fixes[0].content


def test_budget_puts_profile_first_and_respects_the_budget() -> None:
    sections = [
        Section("relevant", "Relevant", [f"- fact number {i} " + "x" * 60 for i in range(20)]),
        Section("profile", "Profile", ["- I prefer short answers"]),
    ]
    text = BudgetPolicy().render(sections, 120)
    assert text.startswith("## Profile")
    assert len(text) / 4 <= 120
    assert BudgetPolicy().render(sections, 0) == ""


async def test_context_block_is_empty_when_nothing_is_relevant(memory: MemoryManager) -> None:
    await memory.write("We deploy with fly.io, never heroku", source="user")
    assert await memory.context_block([Message.user("What does parse_config return?")],
                                      2000) == ""
    block = await memory.context_block([Message.user("How should I deploy this app?")], 2000)
    assert "fly.io" in block


async def test_pinned_profile_and_task_state_are_always_injected(memory: MemoryManager) -> None:
    fact = await memory.write("The staging database is read-only on Fridays", source="user")
    await memory.pin(fact.id)
    await memory.write("I like answers in British English", "profile", source="user")
    await memory.set_task_state("[>] Migrate the billing service")
    block = await memory.context_block([Message.user("rename the helper")], 2000)
    assert "read-only on Fridays" in block
    assert "British English" in block
    assert "Migrate the billing service" in block


async def test_after_turn_then_next_session_sees_it(memory: MemoryManager) -> None:
    turn = [Message.user("remember that we release on Thursdays"),
            _assistant(TextBlock(text="Noted."))]
    await memory.after_turn(turn, "session-1")
    hits = await memory.search_memories("when do we release?", 3)
    assert hits and "Thursdays" in hits[0].text
    assert hits[0].record is not None and hits[0].record.session_id == "session-1"
    assert hits[0].record.source == "policy:correction"


async def test_summary_of_previous_session_on_first_prompt(memory: MemoryManager) -> None:
    await memory.set_summary("We split the billing module into three services.", "old")
    memory.session_id = "new"
    first = await memory.context_block([Message.user("continue the refactor")], 2000)
    assert "split the billing module" in first
    later = [Message.user("continue the refactor"), _assistant(TextBlock(text="ok")),
             Message.user("next step please now")]
    assert "split the billing module" not in await memory.context_block(later, 2000)
