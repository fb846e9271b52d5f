"""`aistack acp`: the Agent Client Protocol server editors (Zed, JetBrains, ...) spawn.

One stdio connection is one bus channel holding any number of sessions. The ACP session
id is the stored aistack session id, so `session/load` of an id resumes that stored
session (and replays it to the editor). A prompt request is answered when its turn
ends; meanwhile the turn's events stream as `session/update` notifications, and every
approval becomes a `session/request_permission` the editor answers. `session/cancel`
stops the turn (the prompt then ends with `cancelled`). The permission mode and the model
switch through `session/set_mode` and the `mode` / `model` config options. When the
editor offers them, its file system and terminals serve the session's tools and its MCP
servers start for the session (`acp_editor.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AudioContentBlock,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ContentToolCallContent,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    ForkSessionResponse,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TerminalToolCallContent,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallUpdate,
)

from aistack_tui.agent import events as ev
from aistack_tui.agent.ports import ApprovalDecision, ApprovalKind
from aistack_tui.channels.acp_editor import (
    AcpMcpEntry,
    EditorFiles,
    EditorTerminals,
    mcp_entries,
    offers_files,
)
from aistack_tui.channels.acp_updates import UpdateMapper, replay, stop_reason, tool_kind
from aistack_tui.channels.bus import BusError, ChannelLink, ChannelSession, MessageBus
from aistack_tui.channels.messages import (
    AgentOutput,
    ApprovalAnswer,
    ApprovalNeeded,
    Control,
    ControlAction,
    OpenRequest,
    Prompt,
    UserMessage,
)
from aistack_tui.channels.typed_input import read_prompt
from aistack_tui.llm.types import ContentBlock, ImageBlock, TextBlock
from aistack_tui.permissions.types import PERMISSION_MODES, PermissionMode

log = logging.getLogger(__name__)

ToolCallContent: TypeAlias = (
    ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent)
AcpPromptBlock: TypeAlias = (TextContentBlock | ImageContentBlock | AudioContentBlock
                  | ResourceContentBlock | EmbeddedResourceContentBlock)

MODE_TEXT: dict[str, tuple[str, str]] = {
    "default": ("Ask", "Reads are allowed; edits, commands and the rest ask first"),
    "acceptEdits": ("Accept edits", "Edits inside the project are allowed; commands ask"),
    "plan": ("Plan", "Read-only: explore and propose a plan, change nothing"),
    "bypassPermissions": ("Bypass", "Everything is allowed except deny rules and "
                          "protected paths"),
}

PERMISSION_OPTIONS = [
    PermissionOption(option_id="once", name="Yes", kind="allow_once"),
    PermissionOption(option_id="session", name="Yes, for this session", kind="allow_always"),
    PermissionOption(option_id="save", name="Yes, and save the rule", kind="allow_always"),
    PermissionOption(option_id="reject", name="No", kind="reject_once"),
]
OPTION_KINDS: dict[str, ApprovalKind] = {
    "once": "once", "session": "session", "save": "save", "reject": "reject"}
TOOL_CALL_SHOWN_TIMEOUT = 5.0
"""How long a terminal waits for its tool call to reach the editor before being put in it."""


def agent_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("aistack-tui")
    except PackageNotFoundError:
        return "0"


@dataclass
class _AcpSession:
    session_id: str
    key: str
    cwd: Path
    mapper: UpdateMapper
    turn: asyncio.Future[ev.TurnEnded] | None = None
    asks: set[asyncio.Task[None]] = field(default_factory=set[asyncio.Task[None]])
    started: dict[str, asyncio.Event] = field(default_factory=dict[str, asyncio.Event])
    """Per tool call: set once the editor was told the call started."""

    def call_started(self, tool_use_id: str) -> asyncio.Event:
        return self.started.setdefault(tool_use_id, asyncio.Event())


class AcpServer:
    """The ACP agent side, over the message bus."""

    def __init__(self, bus: MessageBus, *, model: str | None = None,
                 mode: PermissionMode | None = None) -> None:
        self.link: ChannelLink = bus.connect("acp")
        self.model = model
        self.default_mode: PermissionMode | None = mode
        self.client: Client | None = None
        self.client_capabilities = ClientCapabilities()
        self._sessions: dict[str, _AcpSession] = {}
        self._keys = itertools.count(1)
        self._pump: asyncio.Task[None] | None = None

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    def _conn(self) -> Client:
        if self.client is None:
            raise RequestError.internal_error({"details": "no client connection"})
        return self.client

    # --- lifecycle -----------------------------------------------------------------------

    async def initialize(self, protocol_version: int,
                         client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None,
                         **kwargs: Any) -> InitializeResponse:
        self.client_capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name="aistack", title="aistack",
                                      version=agent_version()),
            auth_methods=[],
        )

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
        for state in self._sessions.values():
            for task in state.asks:
                task.cancel()
        await self.link.close()

    # --- sessions ------------------------------------------------------------------------

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[AcpMcpEntry] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        state, session = await self._open(Path(cwd), None, additional_directories,
                                          mcp_servers)
        return NewSessionResponse(session_id=state.session_id, modes=_modes(session),
                                  config_options=_config_options(session))

    async def load_session(self, cwd: str, session_id: str,
                           mcp_servers: list[AcpMcpEntry] | None = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await self.link.release(old.key)
        state, session = await self._open(Path(cwd), session_id, additional_directories,
                                          mcp_servers)
        conn = self._conn()
        for update in replay(tuple(session.messages), state.cwd):
            await conn.session_update(state.session_id, update)
        return LoadSessionResponse(modes=_modes(session),
                                   config_options=_config_options(session))

    async def _open(self, cwd: Path, resume: str | None,
                    extra_dirs: list[str] | None = None,
                    mcp_servers: list[AcpMcpEntry] | None = None,
                    ) -> tuple[_AcpSession, ChannelSession]:
        if not cwd.is_absolute():
            raise RequestError.invalid_params({"cwd": "must be an absolute path"})
        servers, skipped = mcp_entries(mcp_servers)
        for problem in skipped:
            log.warning("acp: %s", problem)
        self._start_pump()
        key = f"acp-{next(self._keys)}"
        try:
            session = await self.link.open(key, OpenRequest(
                cwd=cwd, resume=resume, model=self.model, mode=self.default_mode,
                additional_directories=tuple(extra_dirs or ()), mcp_servers=servers))
        except BusError as e:
            raise RequestError.invalid_request({"details": str(e)}) from e
        except Exception as e:  # a configuration error: say which, keep serving
            if resume is not None and "no session" in str(e):
                raise RequestError.resource_not_found(resume) from e
            raise RequestError.internal_error({"details": str(e)}) from e
        state = _AcpSession(session.session_id, key, cwd, UpdateMapper(cwd))
        self._sessions[state.session_id] = state
        self._lend_editor(state, session)
        return state, session

    def _lend_editor(self, state: _AcpSession, session: ChannelSession) -> None:
        """The editor's files and terminals for the session's tools, where it offers them."""
        conn = self.client
        if conn is None:
            return
        read, write = offers_files(self.client_capabilities)
        if read or write:
            files = EditorFiles(conn, state.session_id)
            session.use_editor_files(files.read if read else None,
                                     files.write if write else None)
        if self.client_capabilities.terminal:
            session.use_editor_terminal(EditorTerminals(
                conn, state.session_id,
                lambda call_id, terminal_id: self._show_terminal(state, call_id, terminal_id)))

    async def _show_terminal(self, state: _AcpSession, tool_use_id: str,
                             terminal_id: str) -> None:
        """Put a terminal into its tool call, after the editor has heard of the call."""
        # `asyncio.timeout`, not `wait_for`: on 3.11 `wait_for` can swallow the cancel of
        # a stopped turn when the wait ends at the same moment, and the command would run on.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(TOOL_CALL_SHOWN_TIMEOUT):
                await state.call_started(tool_use_id).wait()
        state.mapper.terminals[tool_use_id] = terminal_id
        await self._conn().session_update(state.session_id, ToolCallProgress(
            session_update="tool_call_update", tool_call_id=tool_use_id,
            content=[TerminalToolCallContent(type="terminal", terminal_id=terminal_id)]))

    async def resume_session(self, session_id: str, cwd: str,
                             additional_directories: list[str] | None = None,
                             mcp_servers: list[AcpMcpEntry] | None = None,
                             **kwargs: Any) -> ResumeSessionResponse:
        """`session/load` without the replay (the editor still shows the conversation)."""
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await self.link.release(old.key)
        _state, session = await self._open(Path(cwd), session_id, additional_directories,
                                           mcp_servers)
        return ResumeSessionResponse(modes=_modes(session),
                                     config_options=_config_options(session))

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        state = self._state(session_id)
        del self._sessions[session_id]
        await self.link.release(state.key)
        return CloseSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        raise RequestError.method_not_found("session/list")

    async def fork_session(self, session_id: str, cwd: str,
                           additional_directories: list[str] | None = None,
                           mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """Nothing to log in to: provider keys come from the environment or settings."""
        return AuthenticateResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def _state(self, session_id: str) -> _AcpSession:
        state = self._sessions.get(session_id)
        if state is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id}"})
        return state

    # --- turns ---------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[AcpPromptBlock],
                     **kwargs: Any) -> PromptResponse:
        state = self._state(session_id)
        if state.turn is not None and not state.turn.done():
            raise RequestError.invalid_request({"details": "a prompt is already running"})
        session = self.link.session(state.key)
        assert session is not None  # a state is dropped with its session
        # Taken now: reading the prompt may wait (a server prompt's server starting).
        turn = state.turn = asyncio.get_running_loop().create_future()
        try:
            # Typed text is read as every front end reads it: custom commands, server
            # prompts, @-mentions; what is no prompt is answered in the conversation.
            content = await read_prompt(session, to_prompt(prompt), "the editor (ACP)")
        except BaseException:
            turn.cancel()
            raise
        if isinstance(content, str):
            turn.cancel()
            await self._conn().session_update(state.session_id,
                                              update_agent_message_text(content))
            return PromptResponse(stop_reason="end_turn")
        await self.link.send(UserMessage(state.key, content))
        ended = await turn
        return PromptResponse(stop_reason=stop_reason(ended))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        state = self._sessions.get(session_id)
        if state is not None:
            await self.link.control(Control(state.key, "stop"))

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        await self._control(self._state(session_id), "mode", mode_id)
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        state = self._state(session_id)
        if config_id not in ("mode", "model") or not isinstance(value, str):
            raise RequestError.invalid_params({"configId": f"unknown option {config_id}"})
        await self._control(state, "mode" if config_id == "mode" else "model", value)
        session = self.link.session(state.key)
        assert session is not None
        return SetSessionConfigOptionResponse(config_options=_config_options(session))

    async def _control(self, state: _AcpSession, action: ControlAction, value: str) -> None:
        result = await self.link.control(Control(state.key, action, value))
        if not result.ok:
            raise RequestError.invalid_params({"details": result.text})

    # --- outbound ------------------------------------------------------------------------

    def _start_pump(self) -> None:
        if self._pump is None or self._pump.done():
            self._pump = asyncio.create_task(self._route(), name="acp-outbound")

    async def _route(self) -> None:
        """Every outbound message, in order, as notifications and permission requests."""
        async for message in self.link.outbound():
            state = next((s for s in self._sessions.values() if s.key == message.key), None)
            if state is None:
                continue
            try:
                if isinstance(message, AgentOutput):
                    await self._forward(state, message.event)
                elif isinstance(message, ApprovalNeeded):
                    task = asyncio.create_task(self._ask(state, message))
                    state.asks.add(task)
                    task.add_done_callback(state.asks.discard)
            except Exception:
                log.exception("acp: could not forward to the client")

    async def _forward(self, state: _AcpSession, event: ev.AgentEvent) -> None:
        conn = self._conn()
        try:
            for update in state.mapper.updates(event):
                await conn.session_update(state.session_id, update)
            inner = event.event if isinstance(event, ev.SubagentEvent) else event
            if isinstance(inner, ev.ToolStarted):
                state.call_started(inner.tool_use_id).set()
            elif isinstance(inner, ev.ToolFinished):
                state.started.pop(inner.tool_use_id, None)
        finally:
            if isinstance(event, ev.TurnEnded) and state.turn is not None \
                    and not state.turn.done():
                state.turn.set_result(event)

    async def _ask(self, state: _AcpSession, message: ApprovalNeeded) -> None:
        """The editor's permission dialog for one call; no answer counts as a no."""
        request = message.request
        decision = ApprovalDecision("reject", "The user did not allow this call.")
        try:
            response = await self._conn().request_permission(
                session_id=state.session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=request.tool_use_id,
                    title=request.display.summary or request.tool_name,
                    kind=tool_kind(request.tool_name),
                    status="pending",
                    content=list[ToolCallContent](
                        state.mapper.diffs(request.tool_name, request.tool_input)) or None,
                    raw_input=request.tool_input,
                ),
                options=PERMISSION_OPTIONS,
            )
            outcome = response.outcome
            if outcome.outcome == "selected":
                kind = OPTION_KINDS.get(getattr(outcome, "option_id", ""), "reject")
                if kind != "reject":
                    decision = ApprovalDecision(kind)
            else:
                decision = ApprovalDecision("reject", "The user cancelled the turn.")
        except Exception as e:
            log.warning("acp: permission request failed: %s", e)
        with contextlib.suppress(BusError):
            await self.link.send(ApprovalAnswer(state.key, message.request_id, decision))


def _modes(session: ChannelSession) -> SessionModeState:
    return SessionModeState(
        current_mode_id=session.mode,
        available_modes=[SessionMode(id=m, name=MODE_TEXT[m][0], description=MODE_TEXT[m][1])
                         for m in PERMISSION_MODES],
    )


def _config_options(session: ChannelSession) -> list[Any]:
    return [
        SessionConfigOptionSelect(
            id="mode", name="Mode", category="mode", type="select",
            current_value=session.mode,
            options=[SessionConfigSelectOption(value=m, name=MODE_TEXT[m][0],
                                               description=MODE_TEXT[m][1])
                     for m in PERMISSION_MODES],
        ),
        SessionConfigOptionSelect(
            id="model", name="Model", category="model", type="select",
            current_value=session.model,
            options=[SessionConfigSelectOption(value=m, name=m)
                     for m in dict.fromkeys([session.model, *session.available_models()])],
        ),
    ]


def to_prompt(blocks: list[AcpPromptBlock]) -> Prompt:
    """ACP content as a prompt: text as is, files the editor attached as context blocks,
    links as mentions, images as image blocks."""
    out: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            out.append(TextBlock(text=block.text))
        elif isinstance(block, ImageContentBlock):
            out.append(ImageBlock(media_type=block.mime_type, data=block.data))
        elif isinstance(block, ResourceContentBlock):
            out.append(TextBlock(text=f"@{_path_of(block.uri)}"))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                out.append(TextBlock(text=f'<context ref="{_path_of(resource.uri)}">\n'
                                     f"{resource.text}\n</context>"))
    if all(isinstance(b, TextBlock) for b in out):
        return "\n".join(b.text for b in out if isinstance(b, TextBlock))
    return out


def _path_of(uri: str) -> str:
    return uri.removeprefix("file://")
