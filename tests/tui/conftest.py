"""Fixtures for TUI tests: a fake LLM server the real SDK talks to, and the app on it."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aistack_tui.session.config import make_run_config
from aistack_tui.tui.app import AistackApp
from aistack_tui.tui.typing_guard import DIALOG_GRACE_S, TYPING_BURST_S
from fakes.fake_clock import FakeClock
from fakes.fake_llm import FakeLLMServer, Turn

MODEL = "anthropic/claude-sonnet-4-6"


@pytest.fixture(autouse=True)
def _unfreeze_gc() -> Iterator[None]:
    """The app exempts its long-lived objects from the GC (`gc.freeze`); in a test
    process the next test must be able to collect them again."""
    yield
    gc.unfreeze()


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """A started fake server; the Anthropic SDK is pointed at it through the env."""
    server = FakeLLMServer().start()
    for key, value in server.env("anthropic").items():
        monkeypatch.setenv(key, value)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def clock() -> FakeClock:
    """The app's keystroke clock (the dialogs' typing guard): it moves when a test says."""
    return FakeClock()


@pytest.fixture
def make_app(
    git_repo: Path, fake_llm: FakeLLMServer, clock: FakeClock
) -> Callable[..., AistackApp]:
    def build(*turns: Turn, prompt: str | None = None, **options: Any) -> AistackApp:
        fake_llm.add(*turns)
        window = options.pop("window", None)
        typed = options.pop("typed", b"")  # keys read from the terminal before the app
        config = make_run_config(cwd=git_repo, model=options.pop("model", MODEL), **options)
        kwargs: dict[str, Any] = {"local_servers": (), "clock": clock, "typed": typed}
        if window is not None:
            kwargs["window"] = window
        return AistackApp(config, prompt, **kwargs)

    return build


async def wait_for(pilot: Any, condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the app run until `condition()` is true (fails the test after `timeout`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        error = getattr(pilot.app, "error_message", "")
        if error:
            raise AssertionError(error)
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        await pilot.pause(0.02)


async def wait_for_screen(
    pilot: Any, screen_type: type, timeout: float = 10.0, *, read: bool = True
) -> Any:
    """Wait until a `screen_type` screen is on top *and* composed; returns it.

    `isinstance(app.screen, ...)` turns true as soon as the screen is pushed, before
    its widgets exist; querying or pressing keys then races the compose. With `read`,
    the user then takes a moment to read it: the app's fake clock moves past the
    dialogs' typing guard, so the next key is a deliberate answer.
    """
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, screen_type) and app.screen.is_mounted,
                   timeout=timeout)
    await pilot.pause()
    if read:
        read_dialog(app)
    return app.screen


def read_dialog(app: Any) -> None:
    """The user looks at the dialog before answering (moves a fake keystroke clock)."""
    clock = getattr(getattr(app, "typing_guard", None), "clock", None)
    if isinstance(clock, FakeClock):
        clock.advance(DIALOG_GRACE_S + TYPING_BURST_S)


def screen_text(app: Any) -> str:
    """The screen as plain text, one line per row (what a user would read)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)
