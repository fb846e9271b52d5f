"""`aistack -p` pauses the cyclic GC for start-up only: it is back on for the run and after."""

from __future__ import annotations

import gc
import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aistack_tui.cli.main import main
from aistack_tui.print_mode import runner
from fakes.fake_llm import FakeLLMServer, Turn


@pytest.fixture
def no_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    yield
    gc.enable()
    gc.unfreeze()  # leave this test process as it was


def test_start_up_runs_with_the_gc_paused_and_the_run_with_it_on(
    git_repo: Path, no_stdin: None, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    frozen_before = gc.get_freeze_count()
    with FakeLLMServer([Turn(text="pong")]) as server:
        for key, value in server.env("anthropic").items():
            monkeypatch.setenv(key, value)
        assert main(["-p", "hi", "--model", "anthropic/claude-sonnet-4-6"]) == 0
    assert capsys.readouterr().out.strip() == "pong"
    # resume_gc_after_startup freezes only when it finds the GC paused: start-up's objects
    # being frozen shows both that start-up ran paused and that the GC was turned back on.
    assert gc.get_freeze_count() > frozen_before
    assert gc.isenabled()


def test_resume_leaves_an_enabled_gc_alone(no_stdin: None) -> None:
    frozen_before = gc.get_freeze_count()
    runner.resume_gc_after_startup()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen_before


def test_gc_is_back_on_after_a_configuration_error(
    git_repo: Path, no_stdin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-p", "hi", "--model", "nosuch/model"]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert gc.isenabled()
