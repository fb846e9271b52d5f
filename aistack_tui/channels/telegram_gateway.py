"""`aistack gateway telegram`: a Telegram bot in front of the message bus.

python-telegram-bot long-polls the Bot API (no public URL needed) and its
`AIORateLimiter` keeps the whole bot under Telegram's global limits, retrying a 429
after the `retry_after` Telegram names; each chat's own pace (one change per
`editInterval`) is kept by `telegram_stream.Pacer`.

Only the user ids in the allow list are served. Anyone else gets one refusal, and their
messages never open a session or reach a model. Each allowed chat has one session in the
configured project directory; tool approvals arrive as a message with the diff and three
buttons (Yes / Yes, this session / No).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeAlias, assert_never

from telegram import (
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
)
from telegram.error import TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalDecision, ApprovalKind
from aistack_tui.channels.bus import BusError, ChannelLink, MessageBus
from aistack_tui.channels.messages import (
    AgentOutput,
    ApprovalAnswer,
    ApprovalClosed,
    ApprovalNeeded,
    Control,
    ControlAction,
    OpenRequest,
    Outbound,
    UserMessage,
)
from aistack_tui.channels.telegram_config import GatewayConfig
from aistack_tui.channels.telegram_format import (
    APPROVAL_CHOICES,
    approval_result_text,
    approval_text,
    callback_data,
    escape,
    parse_callback,
)
from aistack_tui.channels.telegram_stream import ChatSink, Pacer, StreamedReply
from aistack_tui.channels.typed_input import read_prompt
from aistack_tui.permissions.types import PERMISSION_MODES

log = logging.getLogger(__name__)

REFUSAL = "Sorry, this bot only answers the people it was set up for."
HELP = (
    "Send a message to talk to the agent working in <code>{project}</code>.\n"
    "/new – start a new conversation\n/stop – stop the running turn\n"
    "/mode [name] – show or switch the permission mode\n"
    "/model [provider/model] – show or switch the model"
)
COMMANDS = [
    BotCommand("new", "start a new conversation"),
    BotCommand("stop", "stop the running turn"),
    BotCommand("mode", "show or switch the permission mode"),
    BotCommand("model", "show or switch the model"),
]
POLL_TIMEOUT = 10
BUTTON_KINDS: dict[str, ApprovalKind] = {"once": "once", "session": "session", "reject": "reject"}

_Handler: TypeAlias = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]


@dataclass
class _Approval:
    key: str
    request_id: str
    chat_id: int
    html: str
    message_id: int = 0


@dataclass
class _Chat:
    """One allowed chat: its session key, pace, the answer being streamed, its queue."""

    chat_id: int
    sink: ChatSink
    reply: StreamedReply | None = None
    mark: int = 0
    """Where the current model response starts in `reply` (a retried stream cuts there)."""
    queue: asyncio.Queue[Outbound] = field(default_factory=asyncio.Queue)
    worker: asyncio.Task[None] | None = None

    @property
    def key(self) -> str:
        return str(self.chat_id)


class TelegramGateway:
    """The bot: access control, commands, prompts in, answers and approvals out."""

    def __init__(self, config: GatewayConfig, bus: MessageBus,
                 poll_timeout: float = POLL_TIMEOUT) -> None:
        self.config = config
        self.poll_timeout = poll_timeout
        """Seconds one long poll waits; stopping the bot waits for the poll in flight."""
        self.link: ChannelLink = bus.connect("telegram")
        self.app = (
            Application.builder()
            .token(config.token)
            .base_url(config.base_url)
            .rate_limiter(AIORateLimiter(max_retries=3))
            .concurrent_updates(True)  # a button press must not wait behind a prompt
            .build()
        )
        self.refused: set[int] = set()
        self._chats: dict[int, _Chat] = {}
        self._approvals: dict[str, _Approval] = {}
        self._tokens = itertools.count(1)
        self._opening: dict[int, asyncio.Lock] = {}
        self._pump: asyncio.Task[None] | None = None
        app = self.app
        app.add_handler(TypeHandler(Update, self._gate), group=-1)
        app.add_handler(CommandHandler(["start", "help"], self._help))
        app.add_handler(CommandHandler("new", self._command("new")))
        app.add_handler(CommandHandler("stop", self._command("stop")))
        app.add_handler(CommandHandler("mode", self._mode))
        app.add_handler(CommandHandler("model", self._model))
        app.add_handler(CallbackQueryHandler(self._button))
        # After the commands above: any other `/name` is read like a prompt (a custom
        # command, a server prompt, or an unknown command answered as such).
        app.add_handler(MessageHandler(filters.TEXT, self._text))

    # --- lifecycle -----------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until `stop` is set; then stop polling and close every session."""
        async with self.app:
            with contextlib.suppress(TelegramError):
                await self.app.bot.set_my_commands(COMMANDS)
            await self.app.start()
            assert self.app.updater is not None
            await self.app.updater.start_polling(poll_interval=0.0,
                                                  timeout=int(self.poll_timeout))
            self._pump = asyncio.create_task(self._route(), name="telegram-outbound")
            try:
                await stop.wait()
            finally:
                await self.app.updater.stop()
                await self.app.stop()
                self._pump.cancel()
                for chat in self._chats.values():
                    if chat.worker is not None:
                        chat.worker.cancel()
                await self.link.close()

    # --- inbound -------------------------------------------------------------------------

    async def _gate(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Strangers get one refusal; nothing of theirs goes further."""
        user = update.effective_user
        if user is not None and user.id in self.config.allowed_user_ids:
            return
        chat = update.effective_chat
        if user is not None and user.id not in self.refused and chat is not None:
            self.refused.add(user.id)
            log.info("telegram: refused user %s", user.id)
            with contextlib.suppress(TelegramError):
                await context.bot.send_message(chat.id, REFUSAL)
        if update.callback_query is not None:
            with contextlib.suppress(TelegramError):
                await update.callback_query.answer()
        raise ApplicationHandlerStop

    async def _chat(self, chat_id: int) -> _Chat:
        """The chat's state, opening its session on first use."""
        lock = self._opening.setdefault(chat_id, asyncio.Lock())
        async with lock:
            chat = self._chats.get(chat_id)
            if chat is None:
                sink = ChatSink(self.app.bot, chat_id, Pacer(self.config.edit_interval))
                chat = _Chat(chat_id, sink)
                await self.link.open(chat.key, OpenRequest(cwd=self.config.project_dir))
                chat.worker = asyncio.create_task(self._serve(chat), name=f"chat-{chat_id}")
                self._chats[chat_id] = chat
            return chat

    async def _text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or not message.text:
            return
        try:
            chat = await self._chat(message.chat_id)
        except Exception as e:
            log.error("telegram: cannot open a session: %s", e)
            await self._say(message.chat_id, f"Cannot start a session: {escape(str(e))}")
            return
        session = self.link.session(chat.key)
        assert session is not None  # opened by `_chat`
        # Read as every front end reads typed text: custom commands, server prompts,
        # @-mentions; what is no prompt (an unknown command) is answered here.
        content = await read_prompt(session, message.text, "Telegram")
        if isinstance(content, str):
            await self._say(chat.chat_id, escape(content))
            return
        await self.link.send(UserMessage(chat.key, content))

    async def _help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if update.effective_chat is not None:
            await self._say(update.effective_chat.id,
                            HELP.format(project=escape(str(self.config.project_dir))))

    def _command(self, action: ControlAction) -> _Handler:
        async def handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
            await self._control(update, action, " ".join(context.args or []))
        return handler

    async def _control(self, update: Update, action: ControlAction, value: str) -> None:
        if update.effective_chat is None:
            return
        chat_id = update.effective_chat.id
        try:
            chat = await self._chat(chat_id)
            result = await self.link.control(Control(chat.key, action, value))
        except (BusError, Exception) as e:
            await self._say(chat_id, escape(str(e)))
            return
        await self._say(chat_id, escape(result.text))

    async def _mode(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if context.args:
            await self._control(update, "mode", context.args[0])
            return
        chat = await self._chat(update.effective_chat.id) if update.effective_chat else None
        session = self.link.session(chat.key) if chat else None
        if chat is not None and session is not None:
            modes = ", ".join(PERMISSION_MODES)
            await self._say(chat.chat_id, f"mode: <b>{escape(session.mode)}</b>\n"
                            f"switch with /mode NAME ({escape(modes)})")

    async def _model(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if context.args:
            await self._control(update, "model", context.args[0])
            return
        chat = await self._chat(update.effective_chat.id) if update.effective_chat else None
        session = self.link.session(chat.key) if chat else None
        if chat is not None and session is not None:
            others = "\n".join(f"<code>{escape(m)}</code>" for m in session.available_models())
            await self._say(chat.chat_id, f"model: <b>{escape(session.model)}</b>\n"
                            f"switch with /model PROVIDER/MODEL, e.g.\n{others}")

    async def _button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        parsed = parse_callback(query.data or "")
        approval = self._approvals.get(parsed[0]) if parsed else None
        if parsed is None or approval is None:
            await query.answer("This request is no longer open.")
            return
        choice = parsed[1]
        kind = BUTTON_KINDS[choice]
        decision = ApprovalDecision(kind, "The user said no." if kind == "reject" else "")
        await self.link.send(ApprovalAnswer(approval.key, approval.request_id, decision))
        await query.answer(dict(APPROVAL_CHOICES)[choice])

    async def _say(self, chat_id: int, html: str) -> None:
        chat = self._chats.get(chat_id)
        sink = chat.sink if chat else ChatSink(self.app.bot, chat_id,
                                               Pacer(self.config.edit_interval))
        try:
            await sink.send(html)
        except TelegramError as e:
            log.warning("telegram: could not send a message: %s", e)

    # --- outbound ------------------------------------------------------------------------

    async def _route(self) -> None:
        """Hand each outbound message to its chat's queue (chats never wait for another)."""
        async for message in self.link.outbound():
            chat = self._chats.get(int(message.key))
            if chat is not None:
                chat.queue.put_nowait(message)

    async def _serve(self, chat: _Chat) -> None:
        while True:
            message = await chat.queue.get()
            try:
                await self._show(chat, message)
            except TelegramError as e:
                log.warning("telegram: chat %s: %s", chat.chat_id, e)
            except Exception:  # one message that cannot be shown must not mute the chat
                log.exception("telegram: chat %s: cannot show %s", chat.chat_id,
                              type(message).__name__)

    def _reply(self, chat: _Chat) -> StreamedReply:
        if chat.reply is None:
            chat.reply = StreamedReply(chat.sink)
        return chat.reply

    async def _end_reply(self, chat: _Chat) -> None:
        if chat.reply is not None:
            await chat.reply.finish()
            chat.reply = None

    async def _show(self, chat: _Chat, message: Outbound) -> None:
        match message:
            case AgentOutput(event=event):
                await self._show_event(chat, event)
            case ApprovalNeeded(request_id=request_id, request=request):
                await self._end_reply(chat)  # later text goes below the question
                token = str(next(self._tokens))
                html = approval_text(request.tool_name, request.display.summary or
                                     request.tool_name, request.decision.reason,
                                     _diff_text(request.display.diff),
                                     request.decision.warnings)
                approval = _Approval(chat.key, request_id, chat.chat_id, html)
                self._approvals[token] = approval
                keyboard = InlineKeyboardMarkup([[
                    InlineKeyboardButton(label, callback_data=callback_data(token, choice))
                    for choice, label in APPROVAL_CHOICES]])
                approval.message_id = await chat.sink.send(html, keyboard)
            case ApprovalClosed(request_id=request_id, approved=approved, withdrawn=withdrawn):
                token = next((t for t, a in self._approvals.items()
                              if a.key == chat.key and a.request_id == request_id), None)
                approval = self._approvals.pop(token, None) if token else None
                if approval is not None and approval.message_id:
                    said = "withdrawn" if withdrawn else ("once" if approved else "reject")
                    await chat.sink.edit(approval.message_id,
                                         approval_result_text(approval.html, said))
            case _:
                return

    async def _show_event(self, chat: _Chat, event: ev.AgentEvent) -> None:
        match event:
            case ev.TextDelta(text=text):
                self._reply(chat).append(text)
            case ev.ToolCallRequested(display=display, name=name):
                summary = (display.summary or name).replace("`", "'")
                self._reply(chat).append(f"\n`⚙ {summary}`\n")
            case ev.PermissionDecided(behavior=behavior, reason=reason):
                if behavior == "deny" and reason:
                    said = reason.replace("`", "'")[:200]
                    self._reply(chat).append(f"`✗ denied: {said}`\n")
            case ev.ErrorOccurred(message=text):
                self._reply(chat).append(f"\n⚠️ {text}\n")
            case ev.Notice(text=text, level=level):
                if level != "info":
                    self._reply(chat).append(f"\n⚠️ {text}\n")
            case ev.TurnEnded(reason=reason, detail=detail):
                if reason == "interrupted":
                    self._reply(chat).append("\n⏹ stopped")
                elif reason not in ("completed", "error") and detail:
                    self._reply(chat).append(f"\n({detail})")
                elif chat.reply is None:
                    self._reply(chat).append("(no answer)")
                await self._end_reply(chat)
            case ev.TurnStarted():
                chat.mark = len(chat.reply.text) if chat.reply is not None else 0
            case ev.StreamReset():
                if chat.reply is not None:  # the response restarts: drop its partial text
                    chat.reply.cut(chat.mark)
            case (ev.ThinkingDelta() | ev.MessageAdded()
                  | ev.PermissionAsked() | ev.ToolStarted() | ev.ToolFinished()
                  | ev.UsageUpdated() | ev.SubagentEvent() | ev.ToolInputDelta()):
                return  # a chat shows the answer and the calls, not their inner workings
            case _:
                assert_never(event)


def _diff_text(diff: object) -> str:
    """An edit's diff as text: `ToolCallDisplay.diff` is a `FileDiff` (its `unified()`),
    or, from older tools, the unified text itself."""
    unified = getattr(diff, "unified", None)
    if callable(unified):
        return str(unified())
    return diff if isinstance(diff, str) else ""
