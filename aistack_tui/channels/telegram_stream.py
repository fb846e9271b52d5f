"""Streaming an answer into a Telegram chat within its flood limits.

Telegram allows about one message change per second in a chat (and answers 429 past
it), while a model streams dozens of deltas a second. So every send and edit in a chat
goes through that chat's `Pacer` (one change per `interval`), and a `StreamedReply` only
ever shows the newest text when its turn comes: a flood of deltas collapses into a few
edits. Long answers continue in new messages (`telegram_format.split_chunks`); a full
message is never edited again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from telegram import Bot, InlineKeyboardMarkup, LinkPreviewOptions
from telegram.error import BadRequest, TelegramError

from aistack_tui.channels.telegram_format import render_all

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 1.0
"""Seconds between two changes in one chat: Telegram's guidance for a private chat."""


class Pacer:
    """One chat's turn-taking: at most one message change per `interval` seconds."""

    def __init__(self, interval: float = DEFAULT_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def turn(self) -> None:
        async with self._lock:
            delay = self._next - self._clock()
            if delay > 0:
                await asyncio.sleep(delay)
            self._next = self._clock() + self.interval


class ChatSink:
    """Sends and edits HTML messages in one chat, each change waiting for its turn."""

    def __init__(self, bot: Bot, chat_id: int, pacer: Pacer) -> None:
        self.bot = bot
        self.chat_id = chat_id
        self.pacer = pacer

    async def send(self, html: str, markup: InlineKeyboardMarkup | None = None) -> int:
        await self.pacer.turn()
        return await self.send_now(html, markup)

    async def edit(self, message_id: int, html: str,
                   markup: InlineKeyboardMarkup | None = None) -> None:
        await self.pacer.turn()
        await self.edit_now(message_id, html, markup)

    async def send_now(self, html: str, markup: InlineKeyboardMarkup | None = None) -> int:
        """Send without waiting: only for a caller that already had its turn."""
        message = await self.bot.send_message(
            self.chat_id, html, parse_mode="HTML", reply_markup=markup,
            link_preview_options=LinkPreviewOptions(is_disabled=True))
        return message.message_id

    async def edit_now(self, message_id: int, html: str,
                       markup: InlineKeyboardMarkup | None = None) -> None:
        try:
            await self.bot.edit_message_text(
                html, chat_id=self.chat_id, message_id=message_id, parse_mode="HTML",
                reply_markup=markup, link_preview_options=LinkPreviewOptions(is_disabled=True))
        except BadRequest as e:
            if "not modified" not in str(e).lower():
                raise


class StreamedReply:
    """One answer in a chat: `append` as text streams, `finish` when the turn ends."""

    def __init__(self, sink: ChatSink) -> None:
        self.sink = sink
        self.text = ""
        self._ids: list[int] = []
        self._shown: list[str] = []
        self._task: asyncio.Task[None] | None = None

    @property
    def message_ids(self) -> list[int]:
        return list(self._ids)

    def append(self, text: str) -> None:
        if not text:
            return
        self.text += text
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._sync(), name="telegram-reply-sync")

    def cut(self, length: int) -> None:
        """Forget the text after `length` (a model response that restarts)."""
        if length < len(self.text):
            self.text = self.text[:length]
            if self._task is None or self._task.done():
                self._task = asyncio.create_task(self._sync(), name="telegram-reply-sync")

    async def finish(self) -> None:
        """Show the final text (waiting for the chat's turns); safe to call twice."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._sync()

    async def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _next_change(self) -> tuple[int, str] | None:
        target = render_all(self.text) if self.text.strip() else []
        for i, html in enumerate(target):
            if i >= len(self._shown) or self._shown[i] != html:
                return i, html
        return None

    async def _sync(self) -> None:
        """One change per turn, each from the newest text, until nothing differs."""
        while self._next_change() is not None:
            await self.sink.pacer.turn()
            change = self._next_change()  # the text grew while we waited: show all of it
            if change is None:
                return
            index, html = change
            try:
                if index < len(self._ids):
                    await self.sink.edit_now(self._ids[index], html)
                    self._shown[index] = html
                else:
                    self._ids.append(await self.sink.send_now(html))
                    self._shown.append(html)
            except TelegramError as e:
                log.warning("telegram: could not show the answer: %s", e)
                return
