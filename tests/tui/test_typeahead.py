"""Keys typed before the terminal leaves cooked mode: read at the switch (cli/typeahead.py),
typed into the prompt at the first frame (tui/typeahead.py), a newline among them as Enter."""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import time
from collections.abc import Iterator

import pytest

from aistack_tui.cli.typeahead import cut_short, typeahead_kept
from aistack_tui.tui.typeahead import keys_of
from aistack_tui.tui.widgets.prompt_input import PromptInput
from fakes.fake_llm import Turn
from tests.tui.conftest import wait_for


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal in its default cooked mode: (the keyboard's end, the app's end)."""
    keyboard, app_end = os.openpty()
    try:
        yield keyboard, app_end
    finally:
        os.close(keyboard)
        os.close(app_end)


def waiting(fd: int) -> int:
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def wait_waiting(fd: int) -> None:
    deadline = time.monotonic() + 5
    while not waiting(fd):
        assert time.monotonic() < deadline, "the typed line never reached the terminal"
        time.sleep(0.01)


def test_keys_typed_in_cooked_mode_are_read_at_the_switch(terminal: tuple[int, int]) -> None:
    keyboard, app_end = terminal
    os.write(keyboard, "a line\rand half a sécond".encode())
    wait_waiting(app_end)  # cooked mode: the line, its Enter turned into a newline
    with typeahead_kept(app_end) as typed:
        assert typed == "a line\nand half a sécond".encode()  # the part line too
        assert waiting(app_end) == 0  # nothing left for the app's input thread
        os.write(keyboard, b"later\r")
        time.sleep(0.1)
        assert os.read(app_end, 100) == b"later\r"  # typed after the switch: Enter is Enter
    assert termios.tcgetattr(app_end)[0] & termios.ICRNL  # cooked mode is back


def test_nothing_typed_nothing_read(terminal: tuple[int, int]) -> None:
    with typeahead_kept(terminal[1]) as typed:
        assert typed == b""


def test_no_terminal_nothing_read() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"piped\n")
    try:
        with typeahead_kept(read_end) as typed:
            assert typed == b""
        assert os.read(read_end, 100) == b"piped\n"  # left for whoever reads it
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.parametrize(("data", "cut"), [
    (b"plain\n", False),
    ("caf\u00e9".encode(), False),
    ("caf\u00e9".encode()[:-1], True),
    ("\u20ac".encode()[:2], True),
    ("\U0001f600".encode()[:3], True),
    ("\U0001f600".encode(), False),
    (b"left \x1b[D", False),
    (b"left \x1b[", True),
    (b"shift+tab \x1b[1;2", True),
    (b"\x1b", True),
    (b"alt+x \x1bx", False),
    (b"f1 \x1bO", True),
    (b"f1 \x1bOP", False),
])
def test_a_key_cut_in_two_is_seen(data: bytes, cut: bool) -> None:
    assert cut_short(data) is cut


def test_the_bytes_are_parsed_as_the_input_thread_parses_them() -> None:
    keys = [key.key for key in keys_of("é\x1b[Dx\n\r\x1b".encode())]
    assert keys == ["é", "left", "x", "ctrl+j", "enter", "escape"]


async def test_the_keys_read_at_the_switch_are_typed_and_their_newline_sends(
    make_app, fake_llm
) -> None:
    app = make_app(Turn(text="Answer."), typed="caf\u00e9\x1b[D!\n".encode())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: fake_llm.model_requests)
        assert app.query_one(PromptInput).text == ""
    sent = fake_llm.model_requests[0].body["messages"][-1]["content"]
    assert "caf\u00e9!" in str(sent)  # the arrow key is one key, not "[D" typed


async def test_a_line_without_enter_waits_in_the_prompt(make_app, fake_llm) -> None:
    app = make_app(typed=b"half typed")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        assert app.query_one(PromptInput).text == "half typed"
    assert fake_llm.model_requests == []
