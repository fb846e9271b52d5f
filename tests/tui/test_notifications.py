"""A turn that ends, or a call that waits for approval, while the user looks elsewhere
calls them back (issue 22 item 11): bell or OSC 9 / 777 as `notifications` says, and the
terminal title always tells the state. Read from what the app writes to its driver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual import events

from aistack_tui.tui.screens.confirm import ConfirmScreen
from fakes.fake_clock import FakeClock
from fakes.fake_llm import Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import SOURCE, answered, edit_turns, type_and_send

BEL = "\x07"


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TERM_PROGRAM", "KITTY_WINDOW_ID"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")


def capture(app) -> list[str]:
    written: list[str] = []
    app._driver.write = written.append  # what would reach the terminal
    return written


def settings(home: Path, **values: object) -> None:
    (home / "settings.json").write_text(json.dumps(values))


async def send(pilot, text: str) -> None:
    """Submit `text` without a key press: a key tells Textual the terminal has the focus."""
    await wait_for(pilot, lambda: pilot.app.session is not None)
    pilot.app.prompt.load_text(text)
    pilot.app.prompt.submit()


async def run_prompt(pilot, text: str, answer: str) -> None:
    await send(pilot, text)
    await wait_for(pilot, lambda: answered(pilot.app, answer))


async def test_a_turn_ending_while_unfocused_rings_the_bell_and_titles_say_the_state(
    make_app,
) -> None:
    app = make_app(Turn(text="Done here."))
    async with app.run_test() as pilot:
        written = capture(app)
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus)
        await run_prompt(pilot, "hello", "Done here.")
    out = "".join(written)
    assert "\x1b]2;aistack: working" in out
    assert out.rindex("\x1b]2;aistack: idle") > out.index("\x1b]2;aistack: working")
    bells = out.count(BEL) - out.count("\x1b]")  # every OSC ends in a BEL too
    assert bells == 1


async def test_a_short_turn_with_the_terminal_focused_stays_quiet(make_app) -> None:
    app = make_app(Turn(text="Quick."))
    async with app.run_test() as pilot:
        written = capture(app)
        await run_prompt(pilot, "hello", "Quick.")
    out = "".join(written)
    assert out.count(BEL) == out.count("\x1b]")  # titles only, no bell
    assert "\x1b]9;" not in out


async def test_approval_asked_on_a_known_terminal_is_an_osc9_notification(
    make_app, git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Edited.")))
    async with app.run_test(size=(100, 30)) as pilot:
        written = capture(app)
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus)
        await send(pilot, "make f return 2")
        await wait_for_screen(pilot, ConfirmScreen)
        out = "".join(written)
        assert "\x1b]2;aistack: needs approval" in out
        assert "\x1b]9;aistack needs approval: " in out
        await pilot.press("y")
        await wait_for(pilot, lambda: answered(app, "Edited."))
    # The "y" was a key press: the user is back, so the end of the turn stays quiet.
    assert "\x1b]9;aistack: done" not in "".join(written)


async def test_osc777_on_foot_and_off_sends_nothing_but_the_title(
    make_app, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "foot")
    settings(isolated_env, notifications="osc")
    app = make_app(Turn(text="One."), Turn(text="Two."))
    async with app.run_test() as pilot:
        written = capture(app)
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus)
        await run_prompt(pilot, "first", "One.")
        assert "\x1b]777;notify;aistack;aistack: done\x07" in "".join(written)
        app.notifier.mode = "off"
        written.clear()
        await run_prompt(pilot, "second", "Two.")
    out = "".join(written)
    assert "\x1b]2;aistack: idle" in out
    assert out.count(BEL) == out.count("\x1b]") and "777" not in out


async def test_a_long_turn_notifies_even_when_focused(
    make_app, git_repo: Path, clock: FakeClock
) -> None:
    (git_repo / "a.py").write_text(SOURCE)
    app = make_app(*edit_turns(Turn(text="Slow one.")))
    async with app.run_test(size=(100, 30)) as pilot:
        written = capture(app)
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "make f return 2")
        await wait_for_screen(pilot, ConfirmScreen)
        clock.advance(10)  # the user took their time
        await pilot.press("y")
        await wait_for(pilot, lambda: answered(app, "Slow one."))
    out = "".join(written)
    assert out.count(BEL) - out.count("\x1b]") == 1


async def test_quitting_gives_the_terminal_its_title_back(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        written = capture(app)
        await wait_for(pilot, lambda: app.session is not None)
    # Unmounting closes the session: the title saved (CSI 22 t) before the first is back.
    assert "\x1b[23;0t" in "".join(written)
    assert app.notifier._title_saved is False


async def test_config_sets_notifications_validated(make_app, isolated_env: Path) -> None:
    from tests.tui.test_session_commands import command

    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        shown = await command(pilot, "/config", "Settings")
        assert "notifications" in shown
        await command(pilot, "/config set notifications bell", "Saved")
        bad = await command(pilot, "/config set notifications loud", "loud")
        assert "Saved" not in bad
    assert json.loads((isolated_env / "settings.json").read_text())["notifications"] == "bell"


def test_an_approval_deep_into_a_long_turn_notifies_even_when_focused() -> None:
    from aistack_tui.tui.notify import LONG_TURN_S, TerminalNotifier

    clock = FakeClock()
    written: list[str] = []
    notifier = TerminalNotifier(written.append, lambda: True, mode="auto", project="p",
                                env={"TERM_PROGRAM": "ghostty"}, clock=clock)
    notifier.turn_started()
    notifier.approval_asked("Bash make")
    assert not any(w.startswith("\x1b]9;") for w in written)  # the user just sent it
    notifier.approval_answered()
    clock.advance(LONG_TURN_S + 1)
    notifier.approval_asked("Bash make deploy")
    assert "\x1b]9;aistack needs approval: Bash make deploy\x07" in written
    notifier.turn_finished("interrupted")
    assert written[-1] == "\x1b]2;aistack: idle · p\x07"  # stopped by the user: no alert
