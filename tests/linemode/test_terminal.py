"""When an interactive run uses the line mode instead of the full-screen TUI."""

from __future__ import annotations

import pytest

from aistack_tui.linemode.terminal import line_mode_reason

GOOD = (120, 40)


@pytest.mark.parametrize(
    ("env", "classic", "size", "expected"),
    [
        ({"TERM": "xterm-256color"}, False, GOOD, None),
        ({"TERM": "xterm-256color"}, True, GOOD, "--classic"),
        ({"TERM": "xterm", "AISTACK_CLASSIC": "1"}, False, GOOD, "AISTACK_CLASSIC is set"),
        ({"TERM": "xterm", "AISTACK_CLASSIC": "0"}, False, GOOD, None),
        ({"TERM": "dumb"}, False, GOOD, "TERM=dumb cannot run a full-screen app"),
        ({}, False, GOOD, "TERM=(unset) cannot run a full-screen app"),
        ({"TERM": "dumb", "INSIDE_EMACS": "29.1,comint"}, False, GOOD,
         "TERM=dumb cannot run a full-screen app"),
        ({"TERM": "xterm", "INSIDE_EMACS": "29.1,comint"}, False, GOOD,
         "inside an Emacs shell buffer"),
        ({"TERM": "xterm-256color", "INSIDE_EMACS": "vterm"}, False, GOOD, None),
        ({"TERM": "eterm-color", "INSIDE_EMACS": "29.1,eat"}, False, GOOD, None),
        ({"TERM": "xterm"}, False, None, "the terminal reports no size"),
        ({"TERM": "xterm"}, False, (0, 0), "the terminal reports no size"),
        ({"TERM": "xterm"}, False, (30, 40),
         "the terminal is 30x40, too small for the full-screen app"),
    ],
)
def test_line_mode_reason(
    env: dict[str, str], classic: bool, size: tuple[int, int] | None, expected: str | None
) -> None:
    assert line_mode_reason(env, classic=classic, size=size) == expected
