"""Selecting text with the mouse in answers and tool output, and copying it (OSC 52)."""

from __future__ import annotations

from textual.selection import Selection
from textual.widget import Widget

from aistack_tui.tui.widgets.tool_card import ToolCard
from fakes.fake_llm import ToolCall, Turn
from tests.tui.conftest import wait_for
from tests.tui.test_app import answered, type_and_send

ANSWER = "First line of the answer.\n\nSecond paragraph with `code` in it."


async def answer_widget(pilot) -> Widget:
    """The (first) widget showing the finished answer's text."""
    app = pilot.app
    await wait_for(pilot, lambda: app.session is not None)
    await type_and_send(pilot, "answer me")
    await wait_for(pilot, lambda: answered(app, ANSWER))
    await pilot.pause()
    return app.query(".assistant-message .frozen").first()


async def drag(pilot, widget: Widget, start: tuple[int, int], end: tuple[int, int]) -> None:
    await pilot.mouse_down(widget, offset=start)
    await pilot.hover(widget, offset=end)
    await pilot.mouse_up(widget, offset=end)
    await pilot.pause()


async def test_dragging_over_an_answer_selects_what_is_shown(make_app) -> None:
    app = make_app(Turn(text=ANSWER))
    async with app.run_test(size=(100, 30)) as pilot:
        widget = await answer_widget(pilot)
        await drag(pilot, widget, (6, 0), (6, 2))
        selected = app.screen.get_selected_text()
        assert selected is not None
        assert selected.startswith("line of the answer.")
        assert selected.rstrip().endswith("Second")
        await pilot.press("ctrl+c")
        assert app.clipboard == selected  # what copy_to_clipboard (OSC 52) sent


async def test_double_click_selects_the_whole_answer(make_app) -> None:
    app = make_app(Turn(text=ANSWER))
    async with app.run_test(size=(100, 30)) as pilot:
        widget = await answer_widget(pilot)
        await pilot.click(widget, offset=(2, 0), times=2)
        await pilot.pause()
        selected = app.screen.get_selected_text() or ""
        assert "First line of the answer." in selected
        assert "Second paragraph with code in it." in selected  # as shown, no backticks


async def test_tool_output_is_selectable_and_a_drag_does_not_toggle_the_card(
    make_app, git_repo
) -> None:
    (git_repo / "notes.txt").write_text("alpha beta\ngamma delta\n")
    app = make_app(Turn(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
                   Turn(text="Read it."))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "read notes")
        await wait_for(pilot, lambda: answered(app, "Read it."))
        card = app.query_one(ToolCard)
        await pilot.click(ToolCard)
        await wait_for(pilot, lambda: card.entry.expanded and card.size.height >= 3)
        await drag(pilot, card, (0, 1), (30, 2))
        selected = app.screen.get_selected_text() or ""
        assert "alpha beta" in selected and "gamma delta" in selected
        assert card.entry.expanded  # selecting is not a click
        await pilot.press("ctrl+c")
        assert app.clipboard == selected


def _luminance(color) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = color.triplet
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


async def test_a_selection_is_readable_and_copying_says_so(make_app) -> None:
    from textual.style import Style as TextualStyle

    app = make_app(Turn(text=ANSWER))
    async with app.run_test(size=(100, 30)) as pilot:
        widget = await answer_widget(pilot)
        style = TextualStyle.from_styles(
            app.screen.get_component_styles("screen--selection")).rich_style
        light, dark = sorted((_luminance(style.color), _luminance(style.bgcolor)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 4.5  # WCAG AA contrast for text
        await drag(pilot, widget, (6, 0), (6, 2))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert any("Copied" in str(n.message) for n in app._notifications)


CODE_ANSWER = "Here it is:\n\n```python\ndef mul(a, b):\n    return a * b\n```\n\nDone."


async def test_copying_a_code_block_gives_the_code_as_written(make_app) -> None:
    """The code block's padding (one column, a blank line above and below) is shown but
    not copied: a selection over the whole answer gives the code without an indent or
    extra blank lines, and so does a drag over the code alone."""
    app = make_app(Turn(text=CODE_ANSWER))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "code please")
        await wait_for(pilot, lambda: answered(app, CODE_ANSWER))
        await pilot.pause()
        widgets = list(app.query(".assistant-message .frozen"))
        whole = "\n".join(
            w.get_selection(Selection(None, None))[0] for w in widgets  # type: ignore[attr-defined]
        )
        assert "def mul(a, b):\n    return a * b" in whole
        assert "\n def mul" not in whole  # no added indent
        assert "Here it is:\n\ndef mul" in whole  # one blank line, as in the markdown
        assert "a * b\n\nDone." in whole
        code = next(w for w in widgets if "def mul" in w.get_selection(Selection(None, None))[0])  # type: ignore[attr-defined]
        row = code._selectable.plain.split("\n").index("def mul(a, b):")  # its screen row
        # a drag from the code's first character to the end of its last line
        await drag(pilot, code, (1, row), (20, row + 1))
        selected = app.screen.get_selected_text() or ""
        assert selected.rstrip() == "def mul(a, b):\n    return a * b"
