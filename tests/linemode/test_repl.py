"""The line-mode REPL in process: the real session facade and SDK against the fake LLM
server, keys through prompt_toolkit's pipe input, output captured from the Rich console."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from aistack_tui.linemode.repl import run_line_mode
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.session.config import make_run_config
from aistack_tui.session.history import HISTORY_FILE
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn

MODEL = "anthropic/claude-sonnet-4-5"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
BUGGY = "def add(a, b):\n    return a - b\n"
CTRL_D = "\x04"


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    for key, value in server.env("anthropic").items():
        monkeypatch.setenv(key, value)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def calc_repo(git_repo: Path) -> Path:
    (git_repo / "calc.py").write_text(BUGGY)
    return git_repo


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp:
        yield inp


class Run:
    """One line-mode session: keys sent up front (prompt_toolkit keeps typeahead for the
    next prompt), the exit code and what the terminal showed."""

    def __init__(self, pipe: PipeInput, repo: Path) -> None:
        self.pipe = pipe
        self.repo = repo
        self.out = io.StringIO()
        self.console = Console(file=self.out, width=100, force_terminal=True,
                               color_system=None, _environ={"TERM": "xterm"})

    async def __call__(self, keys: str, prompt: str | None = None, **options: Any) -> int:
        self.pipe.send_text(keys)
        options.setdefault("model", MODEL)
        config = make_run_config(cwd=self.repo, no_memory=True, no_knowledge=True, **options)
        io_ = LineIO(self.console, self.pipe, DummyOutput())
        return await asyncio.wait_for(run_line_mode(config, prompt, io_), 60)

    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in ANSI.sub("", self.out.getvalue()).splitlines())


@pytest.fixture
def run(pipe: PipeInput, calc_repo: Path) -> Run:
    return Run(pipe, calc_repo)


def edit_script(final: str = "Fixed.") -> list[Turn]:
    return [
        Turn(text="Let me look at **calc.py**.", tool_calls=[
            ToolCall("Read", {"file_path": "calc.py"})]),
        Turn(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b",
                                           "new_string": "a + b"})]),
        Turn(text=final),
    ]


async def test_a_prompt_streams_and_an_edit_approved_with_y_is_applied(
    run: Run, fake_llm: FakeLLMServer, calc_repo: Path
) -> None:
    fake_llm.add(*edit_script("Fixed: add now adds."))
    assert await run("fix the add function\ry\r" + CTRL_D) == 0
    assert (calc_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    text = run.text
    assert "Let me look at calc.py." in text  # rendered Markdown, no asterisks
    assert "● Read calc.py" in text
    assert "? Allow Edit calc.py" in text
    assert "-    return a - b" in text and "+    return a + b" in text
    assert "Fixed: add now adds." in text
    assert fake_llm.remaining == 0


async def test_a_denied_edit_sends_the_users_feedback_to_the_model(
    run: Run, fake_llm: FakeLLMServer, calc_repo: Path
) -> None:
    fake_llm.add(*edit_script("Understood, leaving it."))
    assert await run("fix it\rn\rkeep subtraction, fix the test instead\r" + CTRL_D) == 0
    assert (calc_repo / "calc.py").read_text() == BUGGY
    last = json.dumps(fake_llm.model_requests[-1].body)
    assert "The user denied this tool call." in last
    assert "keep subtraction, fix the test instead" in last
    assert "⊘ denied: The user denied this tool call." in run.text


async def test_feedback_on_the_same_line_as_no(
    run: Run, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(*edit_script("OK."))
    await run("fix it\rn not now\r" + CTRL_D)
    assert "The user said: not now" in json.dumps(fake_llm.model_requests[-1].body)


async def test_yes_for_the_session_stops_asking_for_that_rule(
    run: Run, fake_llm: FakeLLMServer, calc_repo: Path
) -> None:
    second_edit = ToolCall("Edit", {"file_path": "calc.py", "old_string": "a + b",
                                    "new_string": "b + a"})
    fake_llm.add(*edit_script("one"), Turn(tool_calls=[second_edit]), Turn(text="two"))
    await run("fix it\ra\rswap them\r" + CTRL_D)
    assert (calc_repo / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"
    assert run.text.count("? Allow Edit") == 1


async def test_slash_commands_go_through_the_facade(
    run: Run, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="hello"), Turn(text="again"))
    keys = ("/mode plan\r" "/mode\r" "hi\r" "/cost\r" "/model anthropic/claude-sonnet-4-6\r"
            "/model openai/gpt-4.1\r" "and again\r" "/nope\r" "/clear\r" "/help\r" "/quit\r")
    assert await run(keys) == 0
    text = run.text
    assert "· Permission mode: plan" in text
    assert "  * plan" in text
    assert re.search(r"Input [\d,]+ · output [\d,]+", text)
    assert "· Model: anthropic/claude-sonnet-4-6" in text
    assert "✗ /model failed: no API key for openai: set OPENAI_API_KEY" in text
    assert "⚠ unknown command /nope (/help lists them)" in text
    assert "· New conversation " in text
    assert "/undo — Restore the files the agent changed in its last turn" in text
    first, second = fake_llm.model_requests
    assert first.body["model"] == "claude-sonnet-4-5"
    assert second.body["model"] == "claude-sonnet-4-6"  # the failed switch changed nothing


async def test_undo_restores_the_last_turns_edit(
    run: Run, fake_llm: FakeLLMServer, calc_repo: Path
) -> None:
    fake_llm.add(*edit_script())
    await run("fix it\ry\r/undo\r" + CTRL_D)
    assert (calc_repo / "calc.py").read_text() == BUGGY
    assert "  restored: calc.py" in run.text


async def test_ctrl_c_in_the_approval_prompt_denies_and_interrupts(
    run: Run, fake_llm: FakeLLMServer, calc_repo: Path
) -> None:
    fake_llm.add(*edit_script("never sent"))
    await run("fix it\r\x03" + CTRL_D)
    assert (calc_repo / "calc.py").read_text() == BUGGY
    assert "interrupted — the partial answer was kept" in run.text
    assert fake_llm.remaining == 1  # the answer after the edit was never asked for


async def test_ctrl_c_twice_at_an_empty_prompt_quits(run: Run, fake_llm: FakeLLMServer) -> None:
    assert await run("typed\x03\x03\x03") == 0
    assert run.text.count("press Ctrl+C again (or Ctrl+D) to quit") == 1
    assert fake_llm.model_requests == []


async def test_prompts_join_the_shared_history(
    run: Run, fake_llm: FakeLLMServer, aistack_home: Path
) -> None:
    fake_llm.add(Turn(text="one"), Turn(text="two"))
    await run("first\\\rsecond line\r/cost\r" + CTRL_D, prompt="from argv")
    history = [json.loads(line) for line in (aistack_home / HISTORY_FILE).read_text().splitlines()]
    assert history == ["first\nsecond line", "/cost"]
    bodies = [json.dumps(r.body) for r in fake_llm.model_requests]
    assert "from argv" in bodies[0] and "first\\nsecond line" in bodies[1]


async def test_an_at_mention_attaches_the_file(
    run: Run, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="seen"))
    await run("explain @calc.py please\r" + CTRL_D)
    body = json.dumps(fake_llm.model_requests[0].body)
    assert '<attached-file path=\\"calc.py\\">' in body and "return a - b" in body
    assert "· attached calc.py" in run.text


async def test_a_configuration_error_exits_2_with_one_line(
    run: Run, fake_llm: FakeLLMServer
) -> None:
    assert await run(CTRL_D, resume="no-such-session") == 2
    assert run.text.startswith("aistack: ") and "no-such-session" in run.text
    assert len(run.text.splitlines()) == 1


async def test_a_missing_key_exits_2_naming_the_variable(run: Run) -> None:
    assert await run(CTRL_D) == 2
    assert "ANTHROPIC_API_KEY" in run.text


async def test_with_no_provider_the_key_asked_for_is_saved_and_used(
    run: Run, monkeypatch: pytest.MonkeyPatch, aistack_home: Path
) -> None:
    with FakeLLMServer([Turn(text="hello with the pasted key")]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # a base URL, but no key
        code = await run("1\rpasted-key\rhi\r" + CTRL_D, model=None)
        assert code == 0
        assert server.model_requests[0].api_key == "pasted-key"
    saved = json.loads((aistack_home / "credentials.json").read_text())
    assert saved == {"anthropic": "pasted-key"}
    assert (aistack_home / "credentials.json").stat().st_mode & 0o077 == 0
    assert "pasted-key" not in run.text  # typed hidden
    assert "hello with the pasted key" in run.text


async def test_giving_up_the_setup_exits_2_naming_the_variables(
    run: Run, aistack_home: Path
) -> None:
    assert await run("\r", model=None) == 2
    last = run.text.splitlines()[-1]  # one line, however long
    assert last.startswith("aistack: no LLM provider is configured") and "ANTHROPIC_API_KEY" in last
    assert not (aistack_home / "credentials.json").exists()


async def test_a_custom_command_file_is_a_prompt_and_is_offered(
    run: Run, fake_llm: FakeLLMServer, calc_repo: Path
) -> None:
    folder = calc_repo / ".aistack" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(
        "---\ndescription: Review a file for bugs\n---\nReview $ARGUMENTS for sign errors.\n")
    (folder / "help.md").write_text("a file may not take a built-in name\n")
    fake_llm.add(Turn(text="Found one."))
    await run("/review calc.py\r/help\r" + CTRL_D)
    body = json.dumps(fake_llm.model_requests[0].body)
    assert "Review calc.py for sign errors." in body
    text = run.text
    assert "Found one." in text
    assert "  /review — Review a file for bugs" in text
    assert "/help — List the commands and keys" in text  # the built-in kept its name


async def test_quitting_prints_how_to_resume_as_the_tui_does(
    run: Run, fake_llm: FakeLLMServer
) -> None:
    fake_llm.add(Turn(text="Hello."))
    assert await run("hi\r" + CTRL_D) == 0
    assert "saved. Resume it with: aistack --classic --resume " in run.text


async def test_quitting_an_empty_session_prints_no_resume_hint(
    run: Run, fake_llm: FakeLLMServer
) -> None:
    assert await run(CTRL_D) == 0
    assert "Resume it with" not in run.text


SHIFT_TAB = "\x1b[Z"


@pytest.mark.parametrize(("options", "expected"), [
    ({}, "default"),  # acceptEdits, plan, default: bypass is not in the cycle
    ({"permission_mode": "bypassPermissions"}, "acceptEdits"),  # plan, default, acceptEdits
])
async def test_shift_tab_reaches_bypass_only_when_the_command_line_asked(
    run: Run, fake_llm: FakeLLMServer, options: dict[str, Any], expected: str
) -> None:
    # Issue 22 item 2, in the line mode too.
    assert await run(SHIFT_TAB * 3 + "/mode\r/quit\r", **options) == 0
    assert f"  * {expected}" in run.text
    assert "  * bypassPermissions" not in run.text


async def test_mode_bypass_asks_first_and_no_stays(run: Run, fake_llm: FakeLLMServer) -> None:
    # Issue 22 items 2 and 15: `/mode bypass` asks, as the TUI's does.
    assert await run("/mode bypass\rn\r/mode\r/quit\r") == 0
    assert "bypassPermissions runs every tool call without asking you" in run.text
    assert "· Stayed in default mode." in run.text
    assert "  * default" in run.text and "  * bypassPermissions" not in run.text


async def test_mode_bypass_switches_after_yes(run: Run, fake_llm: FakeLLMServer) -> None:
    assert await run("/mode bypass\ry\r/mode\r/quit\r") == 0
    assert "· Permission mode: bypassPermissions" in run.text
    assert "  * bypassPermissions" in run.text


async def test_mode_bypass_asks_nothing_when_the_command_line_started_in_it(
    run: Run, fake_llm: FakeLLMServer
) -> None:
    assert await run("/mode plan\r/mode bypass\r/quit\r",
                     permission_mode="bypassPermissions") == 0
    assert "without asking you" not in run.text  # no question
    assert "· Permission mode: plan" in run.text
    assert "· Permission mode: bypassPermissions" in run.text


async def test_ctrl_c_while_the_session_records_an_ended_turn_interrupts_nothing(
    run: Run, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the turn's end the session records it (usage: slow on a loaded machine);
    a Ctrl+C then used to print "interrupting…" for a turn that had already ended."""
    from aistack_tui.session.conversation import Conversation

    fake_llm.add(Turn(text="Hello there."))
    recording, release = asyncio.Event(), asyncio.Event()
    record = Conversation.record_usage

    async def slow_record(self: Conversation) -> None:
        recording.set()
        await release.wait()
        await record(self)

    monkeypatch.setattr(Conversation, "record_usage", slow_record)
    session = asyncio.ensure_future(run("hi\r" + CTRL_D))
    await asyncio.wait_for(recording.wait(), 30)
    # The REPL routes SIGINT to its loop while a turn runs: it cannot reach pytest.
    assert signal.getsignal(signal.SIGINT) not in (signal.default_int_handler, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    await asyncio.sleep(0.2)
    release.set()
    assert await session == 0
    assert "Hello there." in run.text
    assert "interrupting" not in run.text
