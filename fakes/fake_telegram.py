"""FakeTelegramServer: the Telegram Bot API on 127.0.0.1, for the gateway's tests.

It speaks the real HTTP shapes (`POST /bot<TOKEN>/<method>` with form, JSON or query
parameters; `{"ok": true, "result": ...}` or `{"ok": false, "error_code", "description"}`),
long-polls `getUpdates`, parses HTML entities the way Telegram does (rejecting bad markup
and texts over 4096 characters), refuses edits that change nothing, and answers 429 with
`retry_after` when a chat is flooded. python-telegram-bot talks to it unmodified through
`ApplicationBuilder().base_url(server.base_url)`. Usage::

    with FakeTelegramServer() as tg:
        tg.send_text(1001, "hello")                  # a user writes to the bot
        ...run the gateway against tg.base_url with tg.token...
        tg.wait_for(lambda: tg.bot_messages(1001))   # what the bot answered
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from fakes.fake_telegram_state import (
    ApiCall,
    ApiError,
    BotState,
    ChatMessage,
    FloodLimits,
)
from fakes.threaded_server import ThreadedServer

__all__ = ["ApiCall", "ChatMessage", "FakeTelegramServer", "FloodLimits"]

FAKE_TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijk"
_T = TypeVar("_T")

# Parameters Telegram takes as JSON-serialised strings inside form data.
_JSON_PARAMS = frozenset({"reply_markup", "entities", "allowed_updates", "commands", "scope",
                          "link_preview_options", "reply_parameters"})


def _decode(params: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key in _JSON_PARAMS and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ApiError(400, f"Bad Request: can't parse {key} JSON object") from None
        out[key] = value
    return out


def _int(params: dict[str, Any], key: str) -> int:
    try:
        return int(params[key])
    except KeyError:
        raise ApiError(400, f"Bad Request: {key} is empty") from None
    except (TypeError, ValueError):
        raise ApiError(400, f"Bad Request: invalid {key}") from None


class _BotApp:
    """The ASGI routes; every method answers from `BotState`."""

    def __init__(self, state: BotState) -> None:
        self.state = state
        self.app = Starlette(routes=[
            Route("/bot{token}/{method}", self.handle, methods=["GET", "POST"]),
        ])

    async def _params(self, request: Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query_params)
        kind = request.headers.get("content-type", "")
        if kind.startswith("application/json"):
            body = await request.body()
            if body:
                params.update(json.loads(body))
        elif kind.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            form = await request.form()
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
        return _decode(params)

    async def handle(self, request: Request) -> JSONResponse:
        token = request.path_params["token"]
        method = request.path_params["method"]
        state = self.state
        call = ApiCall(method, {}, time.monotonic())
        try:
            call.params = await self._params(request)
            if token != state.token:
                raise ApiError(401, "Unauthorized")
            result = await self._dispatch(method, call.params)
        except ApiError as e:
            call.status, call.description = e.code, e.description
            state.record(call)
            return JSONResponse(e.body(), status_code=e.code)
        state.record(call)
        return JSONResponse({"ok": True, "result": result})

    async def _dispatch(self, method: str, p: dict[str, Any]) -> Any:
        state = self.state
        name = method.lower()
        if name in ("getupdates",):
            return await self._get_updates(p)
        chat_id = int(p["chat_id"]) if "chat_id" in p else None
        state.check_flood(name, chat_id)
        if name == "getme":
            return state.bot_user
        if name in ("deletewebhook", "close", "logout"):
            return True
        if name == "getwebhookinfo":
            return {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
        if name == "setmycommands":
            state.commands = list(p.get("commands") or [])
            return True
        if name == "getmycommands":
            return state.commands
        if name == "sendchataction":
            return True
        if name == "sendmessage":
            return state.send_message(_int(p, "chat_id"), str(p.get("text", "")),
                                      p.get("parse_mode"), p.get("reply_markup"))
        if name == "editmessagetext":
            return state.edit_text(_int(p, "chat_id"), _int(p, "message_id"),
                                   str(p.get("text", "")), p.get("parse_mode"),
                                   p.get("reply_markup"))
        if name == "editmessagereplymarkup":
            return state.edit_markup(_int(p, "chat_id"), _int(p, "message_id"),
                                     p.get("reply_markup"))
        if name == "deletemessage":
            return state.delete(_int(p, "chat_id"), _int(p, "message_id"))
        if name == "answercallbackquery":
            return state.answer_callback(str(p.get("callback_query_id", "")), p)
        raise ApiError(404, "Not Found")

    async def _get_updates(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        """Long polling: wait up to `timeout` seconds for an update at or after `offset`."""
        offset = int(p.get("offset", 0) or 0)
        limit = int(p.get("limit", 100) or 100)
        deadline = time.monotonic() + float(p.get("timeout", 0) or 0)
        while True:
            updates = self.state.take_updates(offset, limit)
            if updates or time.monotonic() >= deadline or self.state.stopping.is_set():
                return updates
            await asyncio.sleep(0.02)


class FakeTelegramServer:
    """The fake Bot API in a background thread with its own event loop (as the fake LLM)."""

    def __init__(self, token: str = FAKE_TOKEN, limits: FloodLimits | None = None) -> None:
        self.token = token
        self.state = BotState(token, limits or FloodLimits())
        self._app = _BotApp(self.state)
        self._served = ThreadedServer(self._app.app, "fake-telegram")
        self.port = 0

    # -------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What `ApplicationBuilder.base_url` takes: the token and method are appended."""
        return f"{self.url}/bot"

    def start(self) -> FakeTelegramServer:
        self.port = self._served.start()
        return self

    def stop(self) -> None:
        self.state.stopping.set()
        self._served.stop()

    def __enter__(self) -> FakeTelegramServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -------------------------------------------------------------- driving

    def send_text(self, user_id: int, text: str, first_name: str = "Ada") -> ChatMessage:
        """A user writes `text` to the bot in their private chat (chat id = user id)."""
        return self.state.queue_text(user_id, text, first_name)

    def press(self, user_id: int, message: ChatMessage, data: str,
              first_name: str = "Ada") -> str:
        """A user presses the inline button carrying `data` under `message`."""
        return self.state.queue_press(user_id, message, data, first_name)

    # -------------------------------------------------------------- observing

    @property
    def calls(self) -> list[ApiCall]:
        with self.state.lock:
            return list(self.state.calls)

    def calls_to(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method.lower() == method.lower()]

    def bot_messages(self, chat_id: int) -> list[ChatMessage]:
        """What the bot sent to the chat (not deleted), oldest first."""
        with self.state.lock:
            return [m for (chat, _), m in sorted(self.state.messages.items())
                    if chat == chat_id and m.from_bot and not m.deleted]

    def callback_answer(self, query_id: str) -> dict[str, Any] | None:
        with self.state.lock:
            return self.state.answered.get(query_id)

    @property
    def pending_updates(self) -> int:
        with self.state.lock:
            return len(self.state.updates)

    def wait_for(self, probe: Callable[[], _T | None], timeout: float = 15.0) -> _T:
        """Poll `probe` until it returns something truthy; AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            value = probe()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {probe}")
            time.sleep(0.02)

    async def await_for(self, probe: Callable[[], _T | None], timeout: float = 15.0) -> _T:
        """`wait_for` for async tests: yields to the event loop between polls."""
        deadline = time.monotonic() + timeout
        while True:
            value = probe()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {probe}")
            await asyncio.sleep(0.02)
