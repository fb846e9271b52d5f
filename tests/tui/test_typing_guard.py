"""A dialog that opens while the user types takes none of the keystrokes (issue 22 item 1).

The keys typed within the grace period after a dialog opens, or as part of a typing
burst, go on into the prompt; only a deliberate key (the dialog read, the typing over)
answers. Time is a fake clock the tests move: nothing sleeps.
"""

from __future__ import annotations

import json
from pathlib import Path

from textual import events

from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.screens.question import TrustScreen
from aistack_tui.tui.typing_guard import DIALOG_GRACE_S, TYPING_BURST_S
from aistack_tui.tui.widgets.entries import ToolEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from fakes.fake_clock import FakeClock
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import SOURCE, answered, edit_turns, entries, type_and_send
from tests.tui.test_trust_dialog import write

SENTENCE = "also please keep the style consistent"
WRITE = Turn(tool_calls=[ToolCall("Write", {"file_path": "b.py", "content": "b = 1\n"})])


async def test_keys_typed_as_a_dialog_opens_go_to_the_prompt_not_the_dialog(
    make_app, git_repo: Path, fake_llm: FakeLLMServer, clock: FakeClock
) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(WRITE, Turn(text="Done.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "now fix mul")
        # The user goes on typing while the model works; the Edit dialog opens mid-word.
        await pilot.press(*SENTENCE[:22])
        dialog = await wait_for_screen(pilot, ConfirmScreen, read=False)
        clock.advance(0.1)  # a typist's pace: each key well inside a burst
        await pilot.press(*SENTENCE[22:])  # "yle consistent": a `y` and an `n`
        prompt = app.query_one(PromptInput)
        assert app.screen is dialog, "a letter of the sentence answered the dialog"
        assert prompt.text == SENTENCE
        assert (git_repo / "a.py").read_text() == SOURCE
        # Enter in the burst neither answers nor sends: the text waits in the prompt.
        await pilot.press("enter")
        assert app.screen is dialog and prompt.text == SENTENCE
        # The typing has stopped, but the dialog has been up only briefly: still typing.
        clock.advance(TYPING_BURST_S)
        assert TYPING_BURST_S + 0.1 < DIALOG_GRACE_S
        await pilot.press("y", "backspace")
        assert app.screen is dialog and prompt.text == SENTENCE
        # Read, then answered on purpose.
        clock.advance(DIALOG_GRACE_S)
        await pilot.press("y")
        await wait_for(pilot, lambda: (git_repo / "a.py").read_text() != SOURCE)
        write_dialog = await wait_for_screen(pilot, ConfirmScreen)
        assert write_dialog.request.tool_name == "Write"
        await pilot.press("y")
        await wait_for(pilot, lambda: answered(app, "Done."))
        assert prompt.text == SENTENCE
        cards = [e for e in entries(app) if isinstance(e, ToolEntry)]
        assert [c.state for c in cards if c.name in ("Edit", "Write")] == ["done", "done"]
    sent = json.dumps([r.body for r in fake_llm.model_requests])
    assert "sistent" not in sent and "The user said" not in sent


async def test_a_paste_while_a_dialog_is_guarded_goes_to_the_prompt(
    make_app, git_repo: Path
) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Done.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "make f return 2")
        dialog = await wait_for_screen(pilot, ConfirmScreen, read=False)
        app.post_message(events.Paste("pasted y n"))
        await pilot.pause()
        assert app.screen is dialog
        assert app.query_one(PromptInput).text == "pasted y n"


async def test_the_trust_dialog_takes_no_typed_ahead_keys(
    make_app, git_repo: Path, clock: FakeClock
) -> None:
    write(git_repo / ".aistack" / "settings.json", {"permissions": {"allow": ["Bash"]}})
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        # Typing starts as aistack opens; the trust question appears mid-sentence.
        await pilot.press(*"fix the y")
        await wait_for_screen(pilot, TrustScreen, read=False)
        await pilot.press(*" and n bugs")
        assert isinstance(app.screen, TrustScreen)
        assert app.query_one(PromptInput).text == "fix the y and n bugs"
        clock.advance(DIALOG_GRACE_S + TYPING_BURST_S)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.session is not None)
        assert app.session.config.loaded.settings.permissions.allow == []
        assert app.query_one(PromptInput).text == "fix the y and n bugs"


async def test_a_deliberate_key_the_dialog_has_no_use_for_goes_to_the_prompt(
    make_app, git_repo: Path, clock: FakeClock
) -> None:
    """Typing resumed after a pause, the dialog long on screen: the first key is
    deliberate, but a dialog answers only to its own keys (y, n, digits, Esc); a space
    or a letter it has no use for starts the user's next words in the prompt instead of
    vanishing, and the rest of the burst follows it."""
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Done.")))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "make f return 2")
        dialog = await wait_for_screen(pilot, ConfirmScreen, read=False)
        prompt = app.query_one(PromptInput)
        clock.advance(DIALOG_GRACE_S + TYPING_BURST_S)
        await pilot.press("space")
        clock.advance(0.1)
        await pilot.press("a", "n", "d")
        assert app.screen is dialog
        assert prompt.text == " and"
        clock.advance(DIALOG_GRACE_S + TYPING_BURST_S)
        await pilot.press("b")  # deliberate, and no answer either
        assert app.screen is dialog and prompt.text == " andb"
        assert (git_repo / "a.py").read_text() == SOURCE
