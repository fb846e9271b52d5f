"""Telling the user, outside the app, that a turn ended or a tool call waits for approval.

A coding agent's turns are long: the user switches to a browser and comes back minutes
late to a dialog that was waiting. Two channels reach them there: the terminal's title
(OSC 2, always kept current: `aistack: working`, `needs approval`, `idle`, visible in a
tab bar or a tmux status line) and, when the user is not looking, an attention signal:
the bell, or a desktop notification through OSC 9 (iTerm2, WezTerm, kitty, ghostty) or
OSC 777 (foot, urxvt). A terminal that knows neither prints OSC 9's text as garbage, so
`auto` sends it only where TERM_PROGRAM / TERM name a terminal known to show it.

"Not looking" is: the terminal reported it lost focus (Textual turns focus events into
`app_focus`), or the turn took longer than `LONG_TURN_S` (a terminal without focus
reporting never says it lost focus, and after that long the user's eyes have wandered).
The notifier only builds and writes escape sequences through a `write` callable, so
tests read exactly what reaches the terminal.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

from textual.app import App

NotificationMode: TypeAlias = Literal["auto", "bell", "osc", "off"]
TitleState: TypeAlias = Literal["working", "needs approval", "idle"]

LONG_TURN_S = 5.0
"""A turn this long notifies even when the terminal says it has the focus."""

OSC9_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "ghostty", "kitty"})
"""TERM_PROGRAM values of terminals that show OSC 9 as a desktop notification."""
OSC777_TERMS = ("foot", "rxvt")
"""TERM prefixes of terminals that show OSC 777 `notify` instead."""

BEL = "\x07"
SAVE_TITLE = "\x1b[22;0t"
RESTORE_TITLE = "\x1b[23;0t"


def osc_kind(env: Mapping[str, str]) -> Literal["9", "777", ""]:
    """Which desktop-notification escape this terminal shows ("" when none is known)."""
    term = env.get("TERM", "")
    if env.get("TERM_PROGRAM", "") in OSC9_PROGRAMS or term == "xterm-kitty" or (
        "KITTY_WINDOW_ID" in env
    ):
        return "9"
    if term.startswith(OSC777_TERMS):
        return "777"
    return ""


def _clean(text: str) -> str:
    """Text inside an OSC string: no control characters (an ESC or BEL would end it)."""
    return "".join(c for c in text if c.isprintable())


def title_sequence(state: TitleState, project: str) -> str:
    """OSC 2: the window (tab) title."""
    return f"\x1b]2;{_clean(f'aistack: {state} · {project}')}{BEL}"


def notification_sequence(mode: NotificationMode, message: str,
                          env: Mapping[str, str]) -> str:
    """What to write for one notification under `mode` ("" for none)."""
    if mode == "off":
        return ""
    kind = osc_kind(env)
    if mode == "bell" or (mode == "auto" and not kind):
        return BEL
    body = _clean(message)
    if kind == "777":
        return f"\x1b]777;notify;aistack;{body}{BEL}"
    return f"\x1b]9;{body}{BEL}"  # mode "osc" on an unknown terminal: OSC 9 is the common one


class TerminalNotifier:
    """Keeps the title current and signals the user when they are not looking."""

    def __init__(
        self,
        write: Callable[[str], None],
        focused: Callable[[], bool],
        *,
        mode: NotificationMode,
        project: str,
        env: Mapping[str, str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`write` reaches the terminal; `focused` says whether the terminal has the
        focus now; `clock` times turns (tests drive it)."""
        self._write = write
        self._focused = focused
        self.mode: NotificationMode = mode
        self._project = project
        self._env = env
        self._clock = clock
        self._started: float | None = None
        self._title_saved = False

    def _title(self, state: TitleState) -> None:
        if not self._title_saved:
            # xterm's title stack (CSI 22 t): `restore` gives the shell its title back.
            self._write(SAVE_TITLE)
            self._title_saved = True
        self._write(title_sequence(state, self._project))

    def restore(self) -> None:
        """The app is leaving: the terminal's title as it was before."""
        if self._title_saved:
            self._write(RESTORE_TITLE)
            self._title_saved = False

    def _notify(self, message: str, *, long_turn: bool = False) -> None:
        if self._focused() and not long_turn:
            return
        sequence = notification_sequence(self.mode, message, self._env)
        if sequence:
            self._write(sequence)

    def idle(self) -> None:
        """The session is open and waits for a prompt."""
        self._title("idle")

    def turn_started(self) -> None:
        if self._started is None:
            self._started = self._clock()
        self._title("working")

    def _long(self) -> bool:
        return self._started is not None and self._clock() - self._started >= LONG_TURN_S

    def approval_asked(self, what: str) -> None:
        """A tool call waits for the user: the most urgent reason to call them back."""
        self._title("needs approval")
        self._notify(f"aistack needs approval: {what}", long_turn=self._long())

    def approval_answered(self) -> None:
        self._title("working")

    def turn_finished(self, reason: str) -> None:
        """The run ended (done, interrupted, failed): the user may write again."""
        long_turn = self._long()
        self._started = None
        self._title("idle")
        if reason == "interrupted":
            return  # the user stopped it: they are looking
        said = "done" if reason == "completed" else f"stopped ({reason})"
        self._notify(f"aistack: {said}", long_turn=long_turn)


def app_notifier(app: App[Any], mode: NotificationMode, project: Path,
                 clock: Callable[[], float]) -> TerminalNotifier:
    """The notifier of a running Textual app: it writes through the app's driver (as
    Textual's own OSC 52 clipboard does) and asks `app.app_focus`."""

    def write(data: str) -> None:
        driver = app._driver  # pyright: ignore[reportPrivateUsage]
        if driver is not None:
            driver.write(data)

    return TerminalNotifier(write, lambda: app.app_focus, mode=mode, project=project.name,
                            env=os.environ, clock=clock)
