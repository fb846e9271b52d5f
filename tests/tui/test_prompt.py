"""The prompt a person types in all day: pasting, history, search, focus."""

from __future__ import annotations

import pytest
from textual import events

from aistack_tui.tui.widgets.entries import UserEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from tests.fakes.fake_llm import FakeLLMServer, Turn
from tests.tui.conftest import wait_for
from tests.tui.test_app import answered, entries


async def ready(pilot) -> PromptInput:
    await wait_for(pilot, lambda: pilot.app.session is not None)
    return pilot.app.query_one(PromptInput)


def sent_text(fake_llm: FakeLLMServer) -> str:
    """The text of the first user message the model received."""
    content = fake_llm.model_requests[0].body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


# --- pasting -------------------------------------------------------------------------------

LINES = [f"line {i}" for i in range(1, 61)]


@pytest.mark.parametrize(("ending", "trailing"), [("\r\n", True), ("\r", True), ("\n", True),
                                                  ("\r\n", False)])
async def test_multi_line_paste_keeps_its_lines_whatever_the_line_ends(
    make_app, fake_llm: FakeLLMServer, ending: str, trailing: bool
) -> None:
    app = make_app(Turn(text="Got it."))
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        pasted = ending.join(LINES) + (ending if trailing else "")
        app.post_message(events.Paste(pasted))
        await wait_for(pilot, lambda: "Pasted text" in prompt.text)
        assert prompt.text == "[Pasted text #1 +60 lines]"
        await pilot.press("enter")
        await wait_for(pilot, lambda: answered(app, "Got it."))
        expected = "\n".join(LINES)
        assert expected in sent_text(fake_llm)
        assert "\r" not in sent_text(fake_llm)
        shown = next(e for e in entries(app) if isinstance(e, UserEntry))
        assert expected in shown.text and "\r" not in shown.text


async def test_short_paste_with_carriage_returns_becomes_lines(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await ready(pilot)
        app.post_message(events.Paste("one\r\ntwo\rthree"))
        await wait_for(pilot, lambda: "three" in prompt.text)
        assert prompt.text == "one\ntwo\nthree"
