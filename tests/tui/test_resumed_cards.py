"""A resumed session shows the same tool cards as the live one did: the summaries with
relative paths, ⊘ for a denied call, the diff of an edit, the output."""

from __future__ import annotations

from pathlib import Path

from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.widgets.entries import ToolEntry
from fakes.fake_llm import ToolCall, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send


def cards(app) -> list[ToolEntry]:
    return [e for e in entries(app) if isinstance(e, ToolEntry)]


def seen(card: ToolEntry) -> tuple:
    diff = card.diff.unified() if card.diff is not None else ""
    return card.name, card.summary, card.state, bool(card.note), diff, card.detail.strip()


async def test_a_resumed_session_shows_the_cards_the_live_one_showed(
    make_app, git_repo: Path
) -> None:
    (git_repo / "a.py").write_text("def f():\n    return 1\n")
    absolute = str(git_repo / "a.py")
    app = make_app(
        Turn(tool_calls=[ToolCall("Read", {"file_path": absolute})]),
        Turn(tool_calls=[ToolCall("Edit", {"file_path": absolute, "old_string": "return 1",
                                           "new_string": "return 2"})]),
        Turn(tool_calls=[ToolCall("Bash", {"command": "python3 -m calendar 2024 1"})]),
        Turn(tool_calls=[ToolCall("Bash", {"command": "ls"})]),
        Turn(text="All done."),
        permission_mode="acceptEdits",
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "work on a.py")
        await wait_for_screen(pilot, ConfirmScreen)  # the calendar asks: say no
        await pilot.press("n", "enter")
        await wait_for(pilot, lambda: answered(app, "All done."))
        live = [seen(c) for c in cards(app)]
        session_id = app.session.session_id
    assert [c[2] for c in live] == ["done", "done", "denied", "done"]
    assert live[0][1] == "Read a.py (2 lines)" and live[1][1] == "Edited a.py (+1 -1)"

    resumed = make_app(resume=session_id)
    async with resumed.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: resumed.session is not None and cards(resumed))
        again = [seen(c) for c in cards(resumed)]
    assert again == live
