"""The state of the fake Telegram Bot API: chats, messages, pending updates, the record of
every call, and the flood limits Telegram enforces. Kept apart from the HTTP app so tests
can read it without touching Starlette.

Everything here is guarded by one lock: the server thread writes, the test thread reads
and queues updates.
"""

from __future__ import annotations

import html
import itertools
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

MAX_MESSAGE_CHARS = 4096
"""Telegram's limit on a text message, counted on the text after entity parsing."""

# The tags Telegram's HTML parse mode accepts (https://core.telegram.org/bots/api#html-style).
ALLOWED_TAGS = frozenset({
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a",
    "tg-emoji", "code", "pre", "blockquote", "tg-time",
})


class ApiError(Exception):
    """An error answer in the Bot API's shape: `{"ok": false, "error_code", "description"}`."""

    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error_code": self.code,
                                "description": self.description}
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


@dataclass
class ApiCall:
    """One request the bot made, as the server understood it."""

    method: str
    params: dict[str, Any]
    at: float
    status: int = 200
    description: str = ""


@dataclass
class ChatMessage:
    """A message in a chat: its visible text (markup parsed away, as Telegram stores it),
    the raw text the bot sent, and every text it was edited to, in order."""

    message_id: int
    chat_id: int
    text: str
    raw: str
    from_bot: bool
    date: int
    parse_mode: str | None = None
    reply_markup: dict[str, Any] | None = None
    edits: list[str] = field(default_factory=list)
    deleted: bool = False

    def buttons(self) -> list[tuple[str, str]]:
        """(label, callback_data) of the inline keyboard, row by row."""
        rows = (self.reply_markup or {}).get("inline_keyboard", [])
        return [(b["text"], b.get("callback_data", "")) for row in rows for b in row]


class _EntityParser(HTMLParser):
    """Checks markup the way Telegram does (known tags, balanced) and keeps the text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: list[str] = []
        self.error = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.error = self.error or f"Unsupported start tag \"{tag}\""
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.error = self.error or f"Unmatched end tag \"{tag}\""
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(\s[^<>]*)?>")
_ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")


def visible_text(raw: str, parse_mode: str | None) -> str:
    """The message text Telegram would store, or ApiError 400 for markup it rejects:
    unknown or unbalanced tags, a bare `<` or `&` that is not a tag or an entity."""
    if (parse_mode or "").upper() != "HTML":
        return raw
    for i, ch in enumerate(raw):
        if ch == "<" and not _TAG.match(raw, i):
            raise ApiError(400, f"Bad Request: can't parse entities: Unexpected end of "
                           f"name token at byte offset {i}")
        if ch == "&" and not _ENTITY.match(raw, i):
            raise ApiError(400, f"Bad Request: can't parse entities: Character entity "
                           f"expected at byte offset {i}")
    parser = _EntityParser()
    parser.feed(raw)
    parser.close()
    if not parser.error and parser.stack:
        parser.error = f"Can't find end tag corresponding to start tag \"{parser.stack[-1]}\""
    if parser.error:
        raise ApiError(400, f"Bad Request: can't parse entities: {parser.error}")
    return html.unescape("".join(parser.text))


@dataclass
class FloodLimits:
    """Telegram's documented limits, enforced per sliding window.

    Per chat: no more than `per_chat` message changes (send, edit, delete) in any
    `per_chat_window` seconds; overall: `overall` per second. Past a limit the call is
    answered 429 with `retry_after`, exactly as Telegram does.
    """

    per_chat: int = 3
    per_chat_window: float = 1.0
    overall: int = 30


CHANGING_METHODS = frozenset({
    "sendmessage", "editmessagetext", "editmessagereplymarkup", "deletemessage",
})


class BotState:
    """Chats, updates and calls of one fake bot."""

    def __init__(self, token: str, limits: FloodLimits) -> None:
        self.token = token
        self.limits = limits
        self.lock = threading.Lock()
        self.bot_user = {"id": int(token.split(":")[0]), "is_bot": True,
                         "first_name": "aistack test bot", "username": "aistack_test_bot",
                         "can_join_groups": False, "can_read_all_group_messages": False,
                         "supports_inline_queries": False}
        self.calls: list[ApiCall] = []
        self.messages: dict[tuple[int, int], ChatMessage] = {}
        self.updates: deque[dict[str, Any]] = deque()
        self.users: dict[int, dict[str, Any]] = {}
        self.callbacks: dict[str, dict[str, Any]] = {}
        self.answered: dict[str, dict[str, Any]] = {}
        self.commands: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1)
        self._callback_ids = itertools.count(1)
        self._changes: dict[int, deque[float]] = {}
        self._all_changes: deque[float] = deque()

    # ------------------------------------------------------------------ driving

    def user(self, user_id: int, first_name: str) -> dict[str, Any]:
        user = self.users.setdefault(
            user_id, {"id": user_id, "is_bot": False, "first_name": first_name})
        return dict(user)

    def queue_text(self, user_id: int, text: str, first_name: str) -> ChatMessage:
        """A user writes to the bot in a private chat (chat id == user id)."""
        with self.lock:
            sender = self.user(user_id, first_name)
            msg = ChatMessage(next(self._message_ids), user_id, text, text, False,
                              int(time.time()))
            self.messages[(user_id, msg.message_id)] = msg
            payload: dict[str, Any] = {
                "message_id": msg.message_id, "date": msg.date, "from": sender,
                "chat": {"id": user_id, "type": "private", "first_name": first_name},
                "text": text,
            }
            if text.startswith("/"):
                command = text.split()[0]
                payload["entities"] = [{"type": "bot_command", "offset": 0,
                                        "length": len(command)}]
            self.updates.append({"update_id": next(self._update_ids), "message": payload})
            return msg

    def queue_press(self, user_id: int, message: ChatMessage, data: str,
                    first_name: str) -> str:
        """A user presses an inline button under `message`."""
        with self.lock:
            sender = self.user(user_id, first_name)
            query_id = str(next(self._callback_ids))
            self.callbacks[query_id] = {"user_id": user_id, "data": data}
            self.updates.append({
                "update_id": next(self._update_ids),
                "callback_query": {
                    "id": query_id, "from": sender, "chat_instance": f"ci{message.chat_id}",
                    "data": data, "message": self._message_json(message),
                },
            })
            return query_id

    # ------------------------------------------------------------------ reading

    def take_updates(self, offset: int, limit: int) -> list[dict[str, Any]]:
        """getUpdates: forget updates before `offset`, return up to `limit` of the rest."""
        with self.lock:
            while self.updates and self.updates[0]["update_id"] < offset:
                self.updates.popleft()
            return [dict(u) for u in list(self.updates)[:limit]]

    def record(self, call: ApiCall) -> None:
        with self.lock:
            self.calls.append(call)

    def check_flood(self, method: str, chat_id: int | None) -> None:
        """Raise 429 when this change would break a limit; else count it."""
        if method.lower() not in CHANGING_METHODS or chat_id is None:
            return
        now = time.monotonic()
        with self.lock:
            window = self._changes.setdefault(chat_id, deque())
            while window and now - window[0] >= self.limits.per_chat_window:
                window.popleft()
            while self._all_changes and now - self._all_changes[0] >= 1.0:
                self._all_changes.popleft()
            if (len(window) >= self.limits.per_chat
                    or len(self._all_changes) >= self.limits.overall):
                raise ApiError(429, "Too Many Requests: retry after 1", retry_after=1)
            window.append(now)
            self._all_changes.append(now)

    # ------------------------------------------------------------------ bot methods

    def send_message(self, chat_id: int, raw: str, parse_mode: str | None,
                     reply_markup: dict[str, Any] | None) -> dict[str, Any]:
        text = self._checked_text(raw, parse_mode)
        with self.lock:
            if chat_id not in self.users:
                raise ApiError(400, "Bad Request: chat not found")
            msg = ChatMessage(next(self._message_ids), chat_id, text, raw, True,
                              int(time.time()), parse_mode, reply_markup)
            self.messages[(chat_id, msg.message_id)] = msg
            return self._message_json(msg)

    def edit_text(self, chat_id: int, message_id: int, raw: str, parse_mode: str | None,
                  reply_markup: dict[str, Any] | None) -> dict[str, Any]:
        text = self._checked_text(raw, parse_mode)
        with self.lock:
            msg = self._own_message(chat_id, message_id)
            if text == msg.text and reply_markup == msg.reply_markup:
                raise ApiError(400, "Bad Request: message is not modified: specified new "
                               "message content and reply markup are exactly the same as a "
                               "current content and reply markup of the message")
            msg.edits.append(text)
            msg.text, msg.raw, msg.parse_mode, msg.reply_markup = (
                text, raw, parse_mode, reply_markup)
            return self._message_json(msg)

    def edit_markup(self, chat_id: int, message_id: int,
                    reply_markup: dict[str, Any] | None) -> dict[str, Any]:
        with self.lock:
            msg = self._own_message(chat_id, message_id)
            if reply_markup == msg.reply_markup:
                raise ApiError(400, "Bad Request: message is not modified")
            msg.reply_markup = reply_markup
            return self._message_json(msg)

    def delete(self, chat_id: int, message_id: int) -> bool:
        with self.lock:
            msg = self.messages.get((chat_id, message_id))
            if msg is None or msg.deleted:
                raise ApiError(400, "Bad Request: message to delete not found")
            msg.deleted = True
            return True

    def answer_callback(self, query_id: str, params: dict[str, Any]) -> bool:
        with self.lock:
            if query_id not in self.callbacks:
                raise ApiError(400, "Bad Request: query is too old and response timeout "
                               "expired or query ID is invalid")
            if query_id in self.answered:
                raise ApiError(400, "Bad Request: query is too old and response timeout "
                               "expired or query ID is invalid")
            self.answered[query_id] = params
            return True

    # ------------------------------------------------------------------ helpers

    def _checked_text(self, raw: str, parse_mode: str | None) -> str:
        if not raw.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        text = visible_text(raw, parse_mode)
        if len(text) > MAX_MESSAGE_CHARS:
            raise ApiError(400, "Bad Request: message is too long")
        return text

    def _own_message(self, chat_id: int, message_id: int) -> ChatMessage:
        msg = self.messages.get((chat_id, message_id))
        if msg is None or msg.deleted:
            raise ApiError(400, "Bad Request: message to edit not found")
        if not msg.from_bot:
            raise ApiError(400, "Bad Request: message can't be edited")
        return msg

    def _message_json(self, msg: ChatMessage) -> dict[str, Any]:
        user = self.users.get(msg.chat_id, {"id": msg.chat_id, "first_name": "user"})
        body: dict[str, Any] = {
            "message_id": msg.message_id,
            "date": msg.date,
            "chat": {"id": msg.chat_id, "type": "private",
                     "first_name": user.get("first_name", "user")},
            "from": self.bot_user if msg.from_bot else dict(user),
            "text": msg.text,
        }
        if msg.edits:
            body["edit_date"] = int(time.time())
        if msg.reply_markup:
            body["reply_markup"] = msg.reply_markup
        return body
