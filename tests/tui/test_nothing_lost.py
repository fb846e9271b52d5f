"""Nothing typed or pasted is lost silently (issue 22 item 4): a paste chip goes whole,
a paste on a focused card lands in the prompt, `\\`+Enter is a new line, and a draft
cleared with Ctrl+C comes back with Up."""

from __future__ import annotations

from textual import events

from aistack_tui.tui.widgets.tool_card import ToolCard
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import wait_for
from tests.tui.test_app import answered, type_and_send
from tests.tui.test_prompt import LINES, ready, sent_text

PASTE = "\n".join(LINES)
CHIP = "[Pasted text #1 +60 lines]"


async def test_one_backspace_removes_the_whole_paste_chip(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        await pilot.press(*"see ")
        app.post_message(events.Paste(PASTE))
        await wait_for(pilot, lambda: CHIP in prompt.text)
        await pilot.press("backspace")
        assert prompt.text == "see "
        assert prompt.expanded_text() == "see "
        # Undo brings the chip back, and with it its 60 lines.
        await pilot.press("ctrl+z")
        assert prompt.text == f"see {CHIP}"
        assert prompt.expanded_text() == f"see {PASTE}"
        # Typing with the cursor inside the chip types after it: the label stays whole.
        prompt.move_cursor((0, len("see [Pasted")))
        await pilot.press("x")
        assert prompt.text == f"see {CHIP}x"
        # Delete in front of it also takes all of it.
        prompt.move_cursor((0, len("see ")))
        await pilot.press("delete")
        assert prompt.text == "see x"


async def test_a_paste_while_a_tool_card_has_focus_goes_to_the_prompt(
    make_app, fake_llm: FakeLLMServer
) -> None:
    app = make_app(Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),
                   Turn(text="Read."), Turn(text="Got it."))
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        await type_and_send(pilot, "read the readme")
        await wait_for(pilot, lambda: answered(app, "Read."))
        card = app.query_one(ToolCard)
        card.focus()
        await pilot.pause()
        app.post_message(events.Paste("pasted words"))
        await wait_for(pilot, lambda: prompt.text == "pasted words")
        assert prompt.has_focus


async def test_backslash_enter_inserts_a_new_line(make_app, fake_llm: FakeLLMServer) -> None:
    app = make_app(Turn(text="Two lines."))
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        prompt.load_text("first line\\")
        prompt.move_cursor(prompt.document.end)
        await pilot.press("enter")
        assert prompt.text == "first line\n"
        await pilot.press(*"second", "enter")
        await wait_for(pilot, lambda: answered(app, "Two lines."))
    assert "first line\nsecond" in sent_text(fake_llm)


async def test_ctrl_c_on_a_draft_keeps_it_for_up(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        await pilot.press(*"a long draft ")
        app.post_message(events.Paste(PASTE))
        await wait_for(pilot, lambda: CHIP in prompt.text)
        await pilot.press("ctrl+c")
        assert prompt.text == ""
        await pilot.press("up")
        assert prompt.text == f"a long draft {PASTE}"
