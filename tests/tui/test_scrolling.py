"""Scrolling the conversation from the keyboard while the prompt keeps the focus, jumping
to the bottom on submit, and the "new output" marker instead of yanking the view."""

from __future__ import annotations

from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.entries import AssistantEntry, NoticeEntry, UserEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from fakes.fake_llm import Turn
from tests.tui.conftest import screen_text, wait_for
from tests.tui.test_app import entries, type_and_send

LONG = "\n\n".join(f"Paragraph {i} of a long answer that keeps coming." for i in range(150))


def history(n: int) -> list:
    return [UserEntry(f"question {i}") if i % 2 == 0
            else AssistantEntry(f"answer {i}\n\nwith a second paragraph", finished=True)
            for i in range(n)]


async def loaded(pilot, n: int = 40) -> Conversation:
    app = pilot.app
    await wait_for(pilot, lambda: app.session is not None)
    conversation = app.query_one(Conversation)
    await conversation.load(history(n))
    await pilot.pause()
    await wait_for(pilot, lambda: conversation.max_scroll_y > 0
                   and conversation.is_vertical_scroll_end)
    return conversation


async def test_page_keys_scroll_the_conversation_while_the_prompt_has_focus(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = await loaded(pilot)
        prompt = app.query_one(PromptInput)
        assert app.focused is prompt
        bottom = conversation.scroll_y
        await pilot.press("pageup")
        await wait_for(pilot, lambda: conversation.scroll_y < bottom)
        after_one = conversation.scroll_y
        await pilot.press("shift+pageup")
        await wait_for(pilot, lambda: conversation.scroll_y < after_one)
        after_two = conversation.scroll_y
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: conversation.scroll_y > after_two)
        await pilot.press("shift+pagedown", "shift+pagedown", "shift+pagedown")
        await wait_for(pilot, lambda: conversation.is_vertical_scroll_end)
        assert app.focused is prompt


async def test_home_and_end_scroll_only_when_the_prompt_is_empty(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = await loaded(pilot)
        prompt = app.query_one(PromptInput)
        prompt.load_text("abc")
        prompt.move_cursor((0, 3))
        await pilot.press("home")
        assert prompt.cursor_location == (0, 0)  # the prompt's own Home
        assert conversation.is_vertical_scroll_end
        prompt.load_text("")
        await pilot.press("home")
        await wait_for(pilot, lambda: conversation.scroll_y == 0)
        await pilot.press("end")
        await wait_for(pilot, lambda: conversation.is_vertical_scroll_end)


async def test_submitting_while_scrolled_up_jumps_to_the_bottom(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = await loaded(pilot)
        await pilot.press("pageup", "pageup")
        await wait_for(pilot, lambda: not conversation.is_vertical_scroll_end)
        await type_and_send(pilot, "/cost")
        await wait_for(pilot, lambda: isinstance(entries(app)[-1], NoticeEntry))
        await wait_for(pilot, lambda: conversation.is_vertical_scroll_end)
        assert "Cost:" in screen_text(app)


async def test_new_output_while_reading_above_shows_a_marker_and_keeps_the_view(
    make_app,
) -> None:
    app = make_app(Turn(text=LONG, chunk_size=40, delay=0.02))
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = await loaded(pilot)
        await type_and_send(pilot, "write a lot")
        await wait_for(pilot, lambda: any(isinstance(e, AssistantEntry) and "Paragraph 5" in e.text
                                          for e in entries(app)))
        await pilot.press("pageup")
        await pilot.pause(0.1)
        reading_at = conversation.scroll_y
        await wait_for(pilot, lambda: "new output" in screen_text(app))
        await pilot.pause(0.3)
        assert app.busy  # still streaming below
        assert conversation.scroll_y == reading_at  # the view was not yanked
        await pilot.press("end")  # the prompt is empty: End scrolls the conversation
        await wait_for(pilot, lambda: conversation.is_vertical_scroll_end)
        await wait_for(pilot, lambda: "new output" not in screen_text(app))
        await wait_for(pilot, lambda: not app.busy, timeout=20)
        await pilot.pause(0.1)
        assert conversation.is_vertical_scroll_end  # following again until the end
