"""One table of typed inputs through every front end's real entry point: the TUI (Pilot),
the line mode (keys on a pipe), print mode (a `-p` prompt and stream-json user messages),
the ACP agent (a subprocess spoken to over its stdio protocol) and the Telegram gateway
(against the fake Bot API). Each input is read by the one input interpreter
(`session/input.py`), so each front end does the same with it: the same prompt reaches
the fake LLM, or the same command is answered without asking the model.

The only differences are the ones a front end owns: which built-ins it runs (`/help`
shows its own help, or says it is not available there) and whether `!command` runs a
shell command (only at a terminal: elsewhere it is a prompt).
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.channels.bus import MessageBus
from aistack_tui.channels.opener import FacadeOpener
from aistack_tui.channels.telegram_config import load_gateway_config
from aistack_tui.channels.telegram_gateway import TelegramGateway
from aistack_tui.linemode.commands import COMMANDS as LINE_COMMANDS
from aistack_tui.linemode.repl import run_line_mode
from aistack_tui.linemode.terminal import LineIO
from aistack_tui.print_mode.runner import run_print
from aistack_tui.print_mode.stream_session import StreamOptions, run_stream_session
from aistack_tui.session.config import make_run_config
from aistack_tui.session.input import (
    KNOWN_BUILTINS,
    CommandLine,
    InputInterpreter,
    PromptLine,
    RunBuiltin,
    RunShell,
    SendPrompt,
    ShellLine,
    UnknownCommand,
    not_found,
    parse_input,
)
from aistack_tui.tui.app import AistackApp
from aistack_tui.tui.commands import all_commands
from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.entries import AssistantEntry, NoticeEntry, ShellEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from fakes.fake_clock import FakeClock
from fakes.fake_llm import FakeLLMServer, Turn
from fakes.fake_telegram import FakeTelegramServer
from tests.channels.test_acp_server import EditorClient, acp_agent
from tests.e2e.helpers import FAST_RETRY, write_user_settings
from tests.mcp.conftest import EVERYTHING, EVERYTHING_VERSION, npm_install
from tests.print_mode.test_stream_session import Wire

pytestmark = pytest.mark.timeout(300)

MODEL = "anthropic/claude-sonnet-4-6"
OWNER = 4242
NOTE = "the answer is forty-two"
GREET = "---\ndescription: greet someone\n---\nSay hello to $ARGUMENTS, warmly.\n"
DOC = "demo://resource/static/document/features.md"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


@dataclass(frozen=True)
class Case:
    """One typed input: the action it is, and what is then sent to the model (the
    prompt's text exactly, then words its attachments hold) or shown instead."""

    text: str
    action: type
    sent: tuple[str, ...] = ()
    shown: str = ""


HELP = "<the front end's help>"
CASES = [
    Case("hello", SendPrompt, sent=("hello",)),
    Case("/help", RunBuiltin, shown=HELP),
    Case("/nosuch", UnknownCommand, shown="nknown command /nosuch"),
    Case("//etc", SendPrompt, sent=("/etc",)),
    Case("!echo hi", RunShell, shown="hi"),
    Case("@notes.txt what is this", SendPrompt,
         sent=("@notes.txt what is this", '<attached-file path="notes.txt">', NOTE)),
    Case("/greet Bob", SendPrompt, sent=("Say hello to Bob, warmly.",)),
]
MCP_CASES = [
    Case("/mcp__ev__args-prompt Paris", SendPrompt, sent=("What's weather in Paris?",)),
    Case(f"summarise @ev:{DOC}", SendPrompt,
         sent=(f"summarise @ev:{DOC}", f'<attached-resource server="ev" uri="{DOC}">')),
]


@dataclass(frozen=True)
class FrontEnd:
    name: str
    shell: bool
    """Runs `!command` (a terminal front end)."""
    help: str
    """What it shows for /help."""


TUI = FrontEnd("tui", True, "Commands:")
LINE = FrontEnd("line", True, "Commands:")
PRINT = FrontEnd("print", False, "/help is not available in print mode")
STREAM = FrontEnd("stream-json", False, "/help is not available in print mode")
ACP = FrontEnd("acp", False, "/help is not available in the editor (ACP)")
TELEGRAM = FrontEnd("telegram", False, "Send a message to talk to the agent")


def expected(case: Case, front_end: FrontEnd) -> Case:
    """The case as this front end carries it out."""
    if case.action is RunShell and not front_end.shell:
        return Case(case.text, SendPrompt, sent=(case.text,))
    if case.shown == HELP:
        return Case(case.text, case.action, shown=front_end.help)
    return case


Send = Callable[[str, str], Awaitable[str]]
"""Type one input, wait until the front end shows the given words; what it showed."""


@pytest.fixture(scope="session")
def everything(request: pytest.FixtureRequest) -> dict[str, object] | None:
    """server-everything's `.mcp.json` entry, or None where npm cannot install it (the
    MCP rows are left out then, the rest still runs)."""
    if not hasattr(request.config, "cache"):  # -p no:cacheprovider: nowhere to install
        return None
    try:
        folder = npm_install(request, EVERYTHING, EVERYTHING_VERSION)
    except pytest.skip.Exception:
        return None
    return {"command": shutil.which("node"), "args": [str(folder / "dist" / "index.js"),
                                                      "stdio"]}


@pytest.fixture
def project(git_repo: Path, aistack_home: Path, everything: dict[str, object] | None
            ) -> Path:
    (git_repo / "notes.txt").write_text(NOTE + "\n")
    commands = git_repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(GREET)
    settings: dict[str, Any] = {**FAST_RETRY, "memory": False, "knowledge": False,
                                "model": MODEL, "mcpConnectTimeout": 60,
                                "telegram": {"allowedUserIds": [OWNER], "editInterval": 0.2}}
    if everything is not None:
        settings["mcpServers"] = {"ev": everything}
    write_user_settings(aistack_home, settings)
    return git_repo


@pytest.fixture
def cases(everything: dict[str, object] | None) -> list[Case]:
    return CASES + (MCP_CASES if everything is not None else [])


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text blocks of the last user message of a request to the model."""
    message = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") == "text"]


async def play(front_end: FrontEnd, send: Send, llm: FakeLLMServer, cases: list[Case]
               ) -> None:
    """Every case through one front end, each checked against what reached the model."""
    for number, case in enumerate(cases):
        want = expected(case, front_end)
        answer = f"answer number {number}"
        if want.sent:
            llm.add(Turn(text=answer))
        before = len(llm.model_requests)
        shown = await send(case.text, answer if want.sent else want.shown)
        new = llm.model_requests[before:]
        where = f"{front_end.name}: {case.text!r}"
        if not want.sent:
            assert new == [], f"{where} reached the model"
            assert want.shown in shown, f"{where} showed {shown!r}"
            continue
        assert len(new) == 1, f"{where}: {len(new)} requests"
        texts = user_texts(new[0].body)
        assert want.sent[0] in texts, f"{where} sent {texts!r}"
        for words in want.sent[1:]:
            assert any(words in t for t in texts), f"{where}: {words!r} not in {texts!r}"


async def until(condition: Callable[[], object], what: Callable[[], str],
                timeout: float = 60) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out; shown so far: {what()!r}")
        await asyncio.sleep(0.05)


# --- the interpreter's actions, the same for every front end ---------------------------


async def test_each_input_is_the_same_action_for_every_front_end(
        project: Path, cases: list[Case]) -> None:
    tables = {TUI: {c.name for c in all_commands().all()}, LINE: set(LINE_COMMANDS.commands),
              PRINT: set[str](), STREAM: set[str](), ACP: set[str](),
              TELEGRAM: {"start", "help", "new", "stop", "mode", "model"}}
    for names in tables.values():
        assert names <= KNOWN_BUILTINS  # every front end's built-ins are recognised
    with FakeLLMServer() as llm:
        config = make_run_config(cwd=project, env={**os.environ, **llm.env("anthropic")},
                                 model=MODEL)
        session = await open_session(config, DenyAll())
        try:
            await session.wait_for_mcp(60)
            for front_end, builtins in tables.items():
                interpreter = InputInterpreter(session, builtins, shell=front_end.shell)
                for case in cases:
                    action = await interpreter.submit(case.text)
                    assert type(action) is expected(case, front_end).action, (
                        front_end.name, case.text, action)
        finally:
            await session.close()
        assert llm.model_requests == []  # reading input asks no model


def test_paths_escapes_and_suggestions_by_form_alone() -> None:
    assert parse_input("/etc/hosts why?") == PromptLine("/etc/hosts why?")
    assert parse_input("//etc") == PromptLine("/etc")
    assert parse_input("/review\n\npiped text") == CommandLine("review", "piped text")
    assert parse_input("!ls -l") == ShellLine("ls -l")
    assert parse_input("!ls", shell=False) == PromptLine("!ls")
    assert parse_input("!") == PromptLine("!")
    assert not_found("halp", "", ["help", "model"]) == UnknownCommand("halp", "help")
    assert not_found("undo", "", []) == RunBuiltin("undo", "", available=False)


# --- the front ends ----------------------------------------------------------------------


async def test_tui(project: Path, cases: list[Case], monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer() as llm:
        for key, value in llm.env("anthropic").items():
            monkeypatch.setenv(key, value)
        app = AistackApp(make_run_config(cwd=project, model=MODEL), None, local_servers=(),
                         clock=FakeClock())
        async with app.run_test(size=(120, 40)) as pilot:
            transcript = app.query_one(Conversation).transcript

            def text(start: int) -> str:
                shown: list[str] = []
                for entry in transcript.entries[start:]:
                    if isinstance(entry, NoticeEntry | AssistantEntry):
                        shown.append(entry.text)
                    elif isinstance(entry, ShellEntry):
                        shown.append(entry.output)
                return "\n".join(shown)

            async def send(typed: str, words: str) -> str:
                start = len(transcript.entries)
                pilot.app.query_one(PromptInput).load_text(typed)
                await pilot.press("enter")
                await until(lambda: words in text(start) and not app.busy
                            and not app.command_running, lambda: text(start))
                return text(start)

            await until(lambda: app.session is not None, lambda: "starting")
            if len(cases) > len(CASES):
                await until(lambda: app.commands.get("mcp__ev__args-prompt") is not None,
                            lambda: "waiting for server-everything")
            await play(TUI, send, llm, cases)


async def test_line_mode(project: Path, cases: list[Case]) -> None:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None,
                      _environ={"TERM": "xterm"})
    with FakeLLMServer() as llm, create_pipe_input() as pipe:
        config = make_run_config(cwd=project, env={**os.environ, **llm.env("anthropic")},
                                 model=MODEL, no_memory=True, no_knowledge=True)
        repl = asyncio.create_task(
            run_line_mode(config, None, LineIO(console, pipe, DummyOutput())))

        def text(start: int) -> str:
            return ANSI.sub("", out.getvalue()[start:])

        async def send(typed: str, words: str) -> str:
            start = len(out.getvalue())
            pipe.send_text(typed + "\r")
            await until(lambda: words in text(start) or repl.done(), lambda: text(start))
            return text(start)

        try:
            await play(LINE, send, llm, cases)
        finally:
            pipe.send_text("\x04")
            assert await asyncio.wait_for(repl, 60) == 0


async def test_print_mode(project: Path, cases: list[Case]) -> None:
    with FakeLLMServer() as llm:
        env = {**os.environ, **llm.env("anthropic")}

        async def send(typed: str, words: str) -> str:
            out, err = io.StringIO(), io.StringIO()
            config = make_run_config(cwd=project, env=env, model=MODEL)
            code = await run_print(config, typed, "text", out=out, err=err)
            shown = out.getvalue() + err.getvalue()
            assert (code == 0) == (words.startswith("answer number")), (typed, code, shown)
            return shown

        await play(PRINT, send, llm, cases)


async def test_stream_json(project: Path, cases: list[Case]) -> None:
    wire = Wire()
    with FakeLLMServer() as llm:
        config = make_run_config(cwd=project, env={**os.environ, **llm.env("anthropic")},
                                 model=MODEL)
        task = asyncio.create_task(run_stream_session(
            config, StreamOptions(), stdin=wire.stdin, out=wire.out, err=wire.err))

        async def send(typed: str, words: str) -> str:
            done = len(wire.of_type("result"))
            wire.user(typed)
            await until(lambda: len(wire.of_type("result")) > done or task.done(),
                        lambda: wire.err.getvalue())
            result = wire.of_type("result")[-1]
            return f"{result['result']}\n{wire.err.getvalue()}"

        try:
            await play(STREAM, send, llm, cases)
        finally:
            wire.close()
            await asyncio.wait_for(task, 60)


@pytest.mark.slow
async def test_acp(project: Path, cases: list[Case]) -> None:
    client = EditorClient()
    with FakeLLMServer() as llm:
        async with acp_agent(client, project, llm) as conn:
            sid = (await conn.new_session(cwd=str(project))).session_id

            async def send(typed: str, words: str) -> str:
                start = len(client.updates)
                await asyncio.wait_for(
                    conn.prompt(session_id=sid, prompt=[text_block(typed)]), 120)
                chunks = client.updates[start:]
                return "".join(u.content.text for _, u in chunks
                               if getattr(u, "session_update", "") == "agent_message_chunk")

            await play(ACP, send, llm, cases)


async def test_telegram(project: Path, aistack_home: Path, cases: list[Case]) -> None:
    with FakeTelegramServer() as tg, FakeLLMServer() as llm:
        env = {**os.environ, **llm.env("anthropic"), "TELEGRAM_BOT_TOKEN": tg.token,
               "AISTACK_TELEGRAM_BASE_URL": tg.base_url}
        bot = TelegramGateway(load_gateway_config(aistack_home, env, project),
                              MessageBus(FacadeOpener(env)), poll_timeout=1)
        stop = asyncio.Event()
        serving = asyncio.create_task(bot.run(stop))

        def text(start: int) -> str:
            return "\n".join(m.text for m in tg.bot_messages(OWNER)[start:])

        async def send(typed: str, words: str) -> str:
            start = len(tg.bot_messages(OWNER))
            tg.send_text(OWNER, typed)
            await until(lambda: words in text(start), lambda: text(start))
            return text(start)

        try:
            await tg.await_for(lambda: tg.calls_to("getUpdates"))
            await play(TELEGRAM, send, llm, cases)
        finally:
            stop.set()
            await asyncio.wait_for(serving, 30)

