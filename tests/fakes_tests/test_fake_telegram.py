"""The fake Bot API answers python-telegram-bot as Telegram does: the library's own Bot,
pointed at it by base URL, gets its objects, its errors and its 429s."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, InvalidToken, RetryAfter

from fakes.fake_telegram import FakeTelegramServer, FloodLimits


@pytest.fixture
def tg() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer(limits=FloodLimits(per_chat=3, per_chat_window=1.0)) as server:
        yield server


async def test_bot_reads_updates_and_answers_through_the_fake(tg: FakeTelegramServer) -> None:
    tg.send_text(42, "hello bot")
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        me = await bot.get_me()
        updates = await bot.get_updates(timeout=1)
        assert me.is_bot and me.username == "aistack_test_bot"
        assert [u.message.text for u in updates if u.message] == ["hello bot"]
        assert updates[0].effective_user is not None and updates[0].effective_user.id == 42
        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="y")]])
        sent = await bot.send_message(42, "<b>hi</b> &amp; bye", parse_mode="HTML",
                                      reply_markup=keyboard)
        edited = await bot.edit_message_text("plain now", chat_id=42,
                                             message_id=sent.message_id)
        # Acknowledged updates are gone: offset past the last one.
        assert await bot.get_updates(offset=updates[-1].update_id + 1, timeout=0) == ()
    [message] = tg.bot_messages(42)
    assert sent.text == "hi & bye"
    assert not isinstance(edited, bool) and edited.text == "plain now"
    assert message.edits == ["plain now"]


async def test_callback_query_reaches_the_bot_and_is_answered_once(
        tg: FakeTelegramServer) -> None:
    tg.send_text(7, "start")
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        sent = await bot.send_message(7, "approve?")
        [bot_message] = tg.bot_messages(7)
        query_id = tg.press(7, bot_message, "ap:1:once")
        updates = await bot.get_updates(timeout=1)
        query = updates[-1].callback_query
        assert query is not None and query.data == "ap:1:once"
        assert query.message is not None and query.message.message_id == sent.message_id
        assert await bot.answer_callback_query(query.id, text="ok")
        with pytest.raises(BadRequest, match=r"(?i)query is too old"):
            await bot.answer_callback_query(query.id)
    assert tg.callback_answer(query_id) is not None


def test_fake_rejects_what_telegram_rejects() -> None:
    with FakeTelegramServer(limits=FloodLimits(per_chat=100)) as tg:
        asyncio.run(_rejections(tg))


async def _rejections(tg: FakeTelegramServer) -> None:
    tg.send_text(9, "x")
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        sent = await bot.send_message(9, "same")
        with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
            await bot.edit_message_text("same", chat_id=9, message_id=sent.message_id)
        with pytest.raises(BadRequest, match=r"(?i)message is too long"):
            await bot.send_message(9, "a" * 4097)
        with pytest.raises(BadRequest, match=r"(?i)can.t parse entities"):
            await bot.send_message(9, "a < b", parse_mode="HTML")
        with pytest.raises(BadRequest, match=r"(?i)can.t parse entities"):
            await bot.send_message(9, "<b>open", parse_mode="HTML")
        # 4096 visible characters are fine even when the markup makes the text longer.
        await bot.send_message(9, "<code>" + "&lt;" * 4096 + "</code>", parse_mode="HTML")
    with pytest.raises(InvalidToken):
        async with Bot("1:wrong", base_url=tg.base_url):
            pass


async def test_flooding_one_chat_is_answered_429(tg: FakeTelegramServer) -> None:
    tg.send_text(5, "x")
    async with Bot(tg.token, base_url=tg.base_url) as bot:
        for i in range(3):
            await bot.send_message(5, f"m{i}")
        with pytest.raises(RetryAfter):
            await bot.send_message(5, "one too many")
    assert [c.status for c in tg.calls_to("sendMessage")] == [200, 200, 200, 429]
