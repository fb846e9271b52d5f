"""The Telegram gateway against the fake Bot API (python-telegram-bot pointed at it by its
base URL) and the fake LLM: real sessions through the facade, real HTTP both ways."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from aistack_tui.channels.bus import MessageBus
from aistack_tui.channels.opener import FacadeOpener
from aistack_tui.channels.telegram_config import load_gateway_config
from aistack_tui.channels.telegram_gateway import REFUSAL, TelegramGateway
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from fakes.fake_telegram import FakeTelegramServer, FloodLimits
from tests.e2e.helpers import FAST_RETRY, write_user_settings

OWNER = 4242
STRANGER = 666
MODEL = "anthropic/claude-sonnet-4-6"


def _settings(home: Path, edit_interval: float = 0.4) -> None:
    write_user_settings(home, {**FAST_RETRY, "memory": False, "knowledge": False,
                               "model": MODEL,
                               "telegram": {"allowedUserIds": [OWNER],
                                            "editInterval": edit_interval}})


@asynccontextmanager
async def gateway(repo: Path, home: Path, tg: FakeTelegramServer, llm: FakeLLMServer
                  ) -> AsyncIterator[TelegramGateway]:
    env = {**os.environ, **llm.env("anthropic"), "TELEGRAM_BOT_TOKEN": tg.token,
           "AISTACK_TELEGRAM_BASE_URL": tg.base_url}
    config = load_gateway_config(home, env, repo)
    bot = TelegramGateway(config, MessageBus(FacadeOpener(env)), poll_timeout=1)
    stop = asyncio.Event()
    task = asyncio.create_task(bot.run(stop))
    try:
        await tg.await_for(lambda: tg.calls_to("getUpdates"))
        yield bot
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


def _texts(tg: FakeTelegramServer, chat: int) -> list[str]:
    return [m.text for m in tg.bot_messages(chat)]


async def test_allowed_user_is_answered_and_approves_an_edit_with_a_button(
        git_repo: Path, aistack_home: Path) -> None:
    _settings(aistack_home)
    readme = git_repo / "README.md"
    with FakeTelegramServer() as tg, FakeLLMServer() as llm:
        async with gateway(git_repo, aistack_home, tg, llm):
            llm.add(Turn(text="Hello from **the model** & friends <3"))
            tg.send_text(OWNER, "hi")
            await tg.await_for(lambda: any("Hello from the model & friends <3" in t
                                           for t in _texts(tg, OWNER)))
            assert llm.model_requests[0].body["messages"][0]["content"][0]["text"] == "hi"

            llm.add(
                Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),
                Turn(tool_calls=[ToolCall("Edit", {"file_path": "README.md",
                                                   "old_string": "# test repo",
                                                   "new_string": "# edited from chat"})]),
                Turn(text="Done, the title is changed."),
            )
            tg.send_text(OWNER, "change the title")
            prompt = await tg.await_for(
                lambda: next((m for m in tg.bot_messages(OWNER) if m.buttons()), None))
            assert [label for label, _ in prompt.buttons()] == ["Yes", "Yes, this session", "No"]
            assert "-# test repo" in prompt.text and "+# edited from chat" in prompt.text
            assert '<pre><code class="language-diff">' in prompt.raw
            assert readme.read_text() == "# test repo\n"  # nothing before the answer

            yes = dict((label, data) for label, data in prompt.buttons())["Yes"]
            query = tg.press(OWNER, prompt, yes)
            await tg.await_for(lambda: any("Done, the title is changed." in t
                                           for t in _texts(tg, OWNER)))
            assert readme.read_text() == "# edited from chat\n"
            assert tg.callback_answer(query) is not None
            answered = next(m for m in tg.bot_messages(OWNER) if m.message_id == prompt.message_id)
            assert answered.reply_markup is None and "approved" in answered.text
    assert not [c for c in tg.calls if c.status == 429]


async def test_stranger_gets_one_refusal_and_reaches_no_model(
        git_repo: Path, aistack_home: Path) -> None:
    _settings(aistack_home)
    with FakeTelegramServer() as tg, FakeLLMServer() as llm:
        async with gateway(git_repo, aistack_home, tg, llm) as bot:
            llm.add(Turn(text="should never be asked"))
            tg.send_text(STRANGER, "run rm -rf /", first_name="Mallory")
            tg.send_text(STRANGER, "/new", first_name="Mallory")
            tg.send_text(STRANGER, "please?", first_name="Mallory")
            await tg.await_for(lambda: tg.pending_updates == 0 and _texts(tg, STRANGER))
            await asyncio.sleep(0.5)  # give any wrong reply time to show up
            assert _texts(tg, STRANGER) == [REFUSAL]
            assert llm.model_requests == []
            assert bot.link.keys() == []  # no session was even opened


async def test_flood_of_deltas_stays_under_the_rate_limit(
        git_repo: Path, aistack_home: Path) -> None:
    _settings(aistack_home, edit_interval=0.4)
    answer = "".join(f"word{i} " for i in range(700))  # > 4096 characters: two messages
    limits = FloodLimits(per_chat=3, per_chat_window=1.0)
    with FakeTelegramServer(limits=limits) as tg, FakeLLMServer() as llm:
        async with gateway(git_repo, aistack_home, tg, llm):
            llm.add(Turn(text=answer, chunk_size=6, delay=0.004))
            tg.send_text(OWNER, "talk a lot")
            await tg.await_for(lambda: "".join(_texts(tg, OWNER)).replace("\n", "").replace(
                " ", "").endswith("word699"), timeout=60)
    changes = [c for c in tg.calls
               if c.method in ("sendMessage", "editMessageText") and c.params.get("chat_id")]
    assert not [c for c in tg.calls if c.status == 429]
    deltas = len(answer) // 6
    assert len(changes) < deltas / 5  # coalesced: far fewer edits than deltas
    gaps = [b.at - a.at for a, b in itertools.pairwise(changes)]
    assert min(gaps) >= 0.35  # one change per editInterval
    messages = _texts(tg, OWNER)
    assert len(messages) >= 2 and all(len(m) <= 4096 for m in messages)
    assert " ".join(messages).split() == answer.split()


async def test_token_never_reaches_the_logs(git_repo: Path, aistack_home: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    _settings(aistack_home)
    import logging

    from aistack_tui.channels.telegram_config import RedactToken

    with FakeTelegramServer() as tg, FakeLLMServer() as llm:
        handler_filter = RedactToken(tg.token)
        caplog.handler.addFilter(handler_filter)
        caplog.set_level(logging.DEBUG)
        async with gateway(git_repo, aistack_home, tg, llm):
            llm.add(Turn(text="ok"))
            tg.send_text(OWNER, "hi")
            await tg.await_for(lambda: _texts(tg, OWNER))
    logged = caplog.text + json.dumps([r.getMessage() for r in caplog.records])
    assert "getUpdates" in logged  # httpx/PTB logged the URLs at DEBUG ...
    assert tg.token not in logged and tg.token.split(":")[1] not in logged  # ... redacted


async def test_chat_commands_switch_mode_model_and_conversation(
        git_repo: Path, aistack_home: Path) -> None:
    _settings(aistack_home)
    with FakeTelegramServer() as tg, FakeLLMServer() as llm:
        async with gateway(git_repo, aistack_home, tg, llm) as bot:
            def said(text: str) -> bool:
                return any(text in t for t in _texts(tg, OWNER))

            tg.send_text(OWNER, "/mode plan")
            await tg.await_for(lambda: said("mode: plan"))
            session = bot.link.session(str(OWNER))
            assert session is not None and session.mode == "plan"
            tg.send_text(OWNER, "/mode yolo")
            await tg.await_for(lambda: said("unknown permission mode"))
            tg.send_text(OWNER, "/model anthropic/claude-haiku-4-5")
            await tg.await_for(lambda: said("model: anthropic/claude-haiku-4-5"))
            tg.send_text(OWNER, "/stop")
            await tg.await_for(lambda: said("nothing is running"))
            first = session.session_id
            tg.send_text(OWNER, "/new")
            await tg.await_for(lambda: said("new session"))
            assert session.session_id != first
            llm.add(Turn(text="on the new model"))
            tg.send_text(OWNER, "hello again")
            await tg.await_for(lambda: said("on the new model"))
            assert llm.model_requests[-1].body["model"] == "claude-haiku-4-5"
            assert len(llm.model_requests[-1].body["messages"]) == 1  # a fresh conversation
