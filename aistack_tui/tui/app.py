"""The Textual app: session lifecycle, input dispatch and the global keys.

The first frame (a prompt to type in) is painted before anything heavy happens: the
session (SDK import, stores, engine) is opened in a background worker after mount. Events flow
agent → `TurnBridge` (the one worker iterating the stream) → `EventRenderer` → widgets;
this module only decides what a submitted prompt means (command, shell, steering,
prompt) and owns the app-wide keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.worker import Worker, WorkerState

from aistack_tui.session import input as typed
from aistack_tui.session.config import (
    NoProviderError,
    RunConfig,
    bypass_on_command_line,
    next_permission_mode,
    save_credential,
)
from aistack_tui.session.history import HISTORY_FILE
from aistack_tui.session.mentions import FileIndex
from aistack_tui.settings.layers import ConfigError
from aistack_tui.tui import slash
from aistack_tui.tui.approval import ScreenApprover
from aistack_tui.tui.commands import all_commands
from aistack_tui.tui.mcp_status import McpWatch
from aistack_tui.tui.model_catalogue import ModelCatalogue
from aistack_tui.tui.notify import app_notifier
from aistack_tui.tui.pickers import pick_model, pick_session
from aistack_tui.tui.screens.main import MainScreen
from aistack_tui.tui.screens.question import TrustScreen, ask
from aistack_tui.tui.screens.rewind import pick_rewind
from aistack_tui.tui.screens.setup import LOCAL_SERVERS, SetupChoice, SetupScreen
from aistack_tui.tui.typeahead import KeysBeforeFirstFrame
from aistack_tui.tui.typing_guard import Clock, TypingGuard
from aistack_tui.tui.user_shell import run_user_shell
from aistack_tui.tui.widgets.conversation import DEFAULT_WINDOW, Conversation
from aistack_tui.tui.widgets.prompt_input import PromptHistory, PromptInput
from aistack_tui.tui.widgets.status_bar import STARTING, StatusBar
from aistack_tui.tui.widgets.todo_panel import TodoPanel
from aistack_tui.tui.widgets.welcome import WelcomeHeader

# Only what paints the first frame (the prompt) is imported up front; the session, the
# renderer and the dialogs are imported when first used, after it (docs/benchmarks.md).
if TYPE_CHECKING:
    from aistack_tui.agent.ports import ApprovalRequest
    from aistack_tui.llm import types as lt
    from aistack_tui.permissions.types import PermissionMode
    from aistack_tui.session.live import LiveSession
    from aistack_tui.settings.trust import TrustItem
    from aistack_tui.tui.bridge import TurnBridge
    from aistack_tui.tui.renderer import EventRenderer, Level

QUIT_WINDOW_S = 2.0
HANG_UP_GRACE_S = 1.0
"""How long a closed terminal waits for the turn to stop by itself."""


class AistackApp(App[int]):
    """The full-screen session started by `aistack`."""

    CSS_PATH = Path(__file__).parent / "app.tcss"  # absolute, so subclasses elsewhere work
    TITLE = "aistack"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "ctrl_c", "Quit", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", "Permission mode", show=False, priority=True),
    ]

    def __init__(
        self,
        config: RunConfig,
        initial_prompt: str | None = None,
        *,
        window: int = DEFAULT_WINDOW,
        local_servers: tuple[tuple[str, int], ...] = LOCAL_SERVERS,
        clock: Clock = time.monotonic,
        typed: bytes = b"",
    ) -> None:
        """`clock` times keystrokes for the dialogs' typing guard (tests drive it); `typed`:
        keys read from the terminal before the app, typed into the prompt first."""
        super().__init__()
        self.config = config
        self.initial_prompt = initial_prompt
        self.local_servers = local_servers
        self.session: LiveSession | None = None
        self._typing_guard = TypingGuard(clock)
        self.notifier = app_notifier(self, config.loaded.settings.notifications,
                                     config.project_root, clock)
        self.approver = ScreenApprover(self, on_ask=self._on_ask, on_stop=self.interrupt,
                                       on_answered=self.notifier.approval_answered)
        self.commands = all_commands()
        self.builtin_names = frozenset(c.name for c in self.commands.all())
        self.file_index = FileIndex(config.project_root)
        self.history = PromptHistory(config.home / HISTORY_FILE)
        self.main = MainScreen(self.history, window)
        self._pending_prompts: list[str] = []
        self._typed_ahead = KeysBeforeFirstFrame(typed)
        self._early_mode: PermissionMode | None = None
        """A mode chosen with Shift+Tab before the session was ready: it wins at ready."""
        self.bypass_offered = bypass_on_command_line(config)
        """Shift+Tab offers bypassPermissions only when the command line asked for it."""
        self._last_ctrl_c = 0.0
        self._mouse_enabled = True
        self._closed = False
        self.renderer: EventRenderer | None = None
        self.bridge: TurnBridge | None = None
        self.error_message = ""
        self.exit_message = ""
        """Printed after the app has left the screen: the session and how to resume it."""
        self.welcome = WelcomeHeader(config.project_root)
        self._command: Worker[None] | None = None
        self.catalogue = ModelCatalogue()
        self._mcp = McpWatch()
        if config.trust_prompt is None:
            config.trust_prompt = self.ask_trust

    # --- widgets ------------------------------------------------------------------------

    @property
    def conversation(self) -> Conversation:
        return self.main.query_one(Conversation)

    @property
    def status(self) -> StatusBar:
        return self.main.query_one(StatusBar)

    @property
    def prompt(self) -> PromptInput:
        return self.main.query_one(PromptInput)

    @property
    def busy(self) -> bool:
        return self.bridge is not None and self.bridge.running

    @property
    def shell_running(self) -> bool:
        """A `!command` has not finished yet (Esc stops it)."""
        return any(w.group == "shell" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in self.workers)

    @property
    def command_running(self) -> bool:
        """A background slash command (/compact, /undo…) has not finished yet."""
        return self._command is not None and self._command.state in (
            WorkerState.PENDING, WorkerState.RUNNING
        )

    @property
    def textual_app(self) -> App[Any]:
        """Slash commands push dialogs on this (they see the app only as a `CommandHost`)."""
        return self

    def get_default_screen(self) -> MainScreen:
        return self.main

    def on_ready(self) -> None:
        """After the first frame: only now start the heavy work."""
        self._typed_ahead.replay(self.prompt)
        if not gc.isenabled():  # paused by the CLI for start-up, whose objects live on
            gc.freeze()
            gc.enable()
        from aistack_tui.tui.bridge import TurnBridge
        from aistack_tui.tui.renderer import EventRenderer

        self.renderer = EventRenderer(
            self.conversation, self.status, self.main.query_one(TodoPanel)
        )
        self.bridge = TurnBridge(self, self.renderer, self.require_session, self._turn_ended,
                                 self.notifier)
        conversation = self.conversation
        conversation.mount(self.welcome, before=0 if conversation.children else None)
        self.status.set_mode(self.config.permission_mode)
        self.status.set_busy(STARTING)
        self.start_session()

    # --- session lifecycle --------------------------------------------------------------

    @work(exclusive=True, group="session")
    async def start_session(self) -> None:
        from aistack_tui.bootstrap import open_session

        try:
            self.session = await open_session(self.config, self.approver, interactive=True)
        except NoProviderError as e:
            self.status.set_busy("")
            self.push_screen(
                SetupScreen(str(e), self.local_servers), callback=self._setup_done
            )
            return
        except ConfigError as e:
            self.error_message = f"aistack: {e}"
            self.exit(2)
            return
        except Exception as e:  # a broken install or a bug: one line, not a traceback
            self.error_message = f"aistack: could not start the session: {type(e).__name__}: {e}"
            self.exit(1)
            return
        await self._session_ready()

    async def _setup_done(self, choice: SetupChoice | None) -> None:
        if choice is None:
            return
        if choice.api_key:
            save_credential(self.config.home, choice.provider, choice.api_key)
        if choice.model:
            self.config.model = f"{choice.provider}/{choice.model}"
        self.status.set_busy(STARTING)
        self.start_session()

    async def ask_trust(self, items: list[TrustItem]) -> bool:
        """The trust gate's dialog: may what this project's files ask for apply?"""
        self.status.set_busy("")
        try:
            return await ask(self, TrustScreen(items))
        finally:
            self.status.set_busy(STARTING)

    async def _session_ready(self) -> None:
        from aistack_tui.tui.renderer import history_entries
        from aistack_tui.tui.screens.elicitation import ScreenElicitation

        session = self.require_session()
        self.status.set_busy("")
        self.notifier.idle()
        self.status.set_model(session.model)
        if self._early_mode is not None and self._early_mode != session.mode:
            session.set_mode(self._early_mode)  # pressed while the session was opening
        self._early_mode = None
        self.status.set_mode(session.mode)
        if session.messages:  # opened resumed (-c, --resume)
            session.adopt_stored_totals()
        self._show_usage()
        self.welcome.set_model(session.model)
        # Start-up warnings (MCP config, skills, checkpoints) now, not after the first prompt.
        for early in session.take_notices():
            await self.notice(early.text, early.level)
        for problem in slash.register_custom_commands(self.commands, session):
            await self.notice(f"Slash command skipped: {problem}", "warning")
        session.on_mcp_status(self._mcp_changed)
        session.on_index_phase(self.status.set_index)
        session.on_tool_output(self._tool_output)
        session.on_background_change(self.status.set_shells)
        session.mcp.use_elicitation(ScreenElicitation(self))
        self.file_index.resources = session.mcp.resource_mentions
        for status in session.mcp_statuses():
            self._mcp_changed(status)
        if session.messages:
            await self.conversation.load(
                history_entries(session.messages, session.replay_display)
            )
        # What was built so far (SDKs, the session, its history) lives as long as the app:
        # exempt it from garbage collection, or every full collection walks it and stalls
        # a frame for 100 ms and more while an answer streams.
        gc.freeze()
        self._warm_catalogue()
        if self.config.resume == "":
            self.open_session_picker()
        prompts, self._pending_prompts = self._pending_prompts, []
        if self.initial_prompt:
            prompts.insert(0, self.initial_prompt)
            self.initial_prompt = None
        if prompts:
            await self.send_prompt("\n\n".join(prompts))

    def _tool_output(self, tool_use_id: str, text: str) -> None:
        """A running command printed something: its card shows it as it runs."""
        if self.renderer is not None:
            self.renderer.tool_output(tool_use_id, text)

    def _mcp_changed(self, status: Any) -> None:
        """An MCP server changed state: refresh the status line, report a new failure."""
        session = self.session
        if session is None or not self.is_running:
            return
        self.status.set_mcp(self._mcp.summary(session.mcp_statuses()))
        if status.status == "connected":
            slash.register_mcp_prompts(self.commands, session)
        for text, level in self._mcp.notices(status):
            self.call_later(self.notice, text, level)

    def require_session(self) -> LiveSession:
        if self.session is None:
            raise RuntimeError("the session is not open yet")
        return self.session

    async def _turn_ended(self, ended: Any) -> None:
        # The finished turn's widgets and caches stay: collect its garbage while the UI
        # is idle, then exempt the rest, so the next answer's collections stay small.
        gc.collect()
        gc.freeze()
        leftover = self.bridge.take_leftover() if self.bridge else []
        if leftover and not self.prompt.text:
            self.prompt.fill("\n\n".join(leftover))

    async def new_conversation(self) -> None:
        if self.busy:
            await self.notice("Wait for the agent to finish (or press Esc) first.", "warning")
            return
        session = self.require_session()
        await session.new_conversation()
        await self.conversation.clear()
        self.status.set_context(session.context_tokens, session.context_window)
        self.main.query_one(TodoPanel).set_todos([])
        await self.notice("Started a new conversation.")

    async def resume_session(self, session_id: str) -> None:
        from aistack_tui.tui.renderer import history_entries

        session = self.require_session()
        if self.busy:
            await self.notice("Wait for the agent to finish (or press Esc) first.", "warning")
            return
        try:
            await session.resume(session_id)
        except (ConfigError, Exception) as e:
            await self.notice(str(e), "error")
            return
        await self.conversation.load(history_entries(session.messages, session.replay_display))
        self._show_usage()
        title = session.title or session.session_id[:8]
        await self.notice(f"Resumed {title} ({len(session.messages)} messages).")

    def _show_usage(self) -> None:
        """Tokens, `ctx %` and cost as the session knows them (a resumed one's too)."""
        session = self.require_session()
        total = session.usage.usage
        tokens = (total.input_tokens + total.output_tokens + total.cache_read_input_tokens
                  + total.cache_creation_input_tokens)
        self.status.update_usage(tokens, session.context_tokens, session.context_window,
                                 session.usage.cost_usd)

    async def switch_model(self, model_string: str) -> None:
        session = self.require_session()
        try:
            await session.switch_model(model_string)
        except (ConfigError, Exception) as e:
            await self.notice(f"Cannot switch to {model_string}: {e}", "error")
            return
        self.status.set_model(session.model)
        self.welcome.set_model(session.model)
        # The same tokens fill another share of the new model's window.
        self.status.set_context(session.context_tokens, session.context_window)
        await self.notice(f"Switched to {session.model}.")

    def open_session_picker(self) -> None:
        self.run_worker(pick_session(self), group="picker")

    def open_rewind_list(self) -> None:
        """Esc Esc: the turns to rewind to, then `/rewind N` for the one chosen."""
        self.run_worker(pick_rewind(self), group="picker")

    def open_model_picker(self) -> None:
        self.run_worker(pick_model(self), group="picker")

    @work(group="catalogue", exit_on_error=False)
    async def _warm_catalogue(self) -> None:
        """Build the offline model list once the session is up, so /model opens on it."""
        await self.catalogue.warm(self.require_session())

    # --- input --------------------------------------------------------------------------

    async def handle_input(self, text: str, images: Sequence[lt.ImageBlock] = ()) -> None:
        """What the user submitted: a /command, a !shell command, steering or a prompt
        (with the images of its chips, sent only with a prompt that starts a turn), read
        as every front end reads it (`session/input.py`)."""
        line = typed.parse_input(text, shell=True)
        if isinstance(line, typed.CommandLine):
            await self.run_command(line.name, line.args)
            return
        if isinstance(line, typed.ShellLine):
            self.run_shell(line.command)
            return
        text = line.text if isinstance(line, typed.PromptLine) else text  # `//x` sends `/x`
        if images and (self.session is None or self.command_running or self.busy):
            await self.notice("The image was not sent: images go with a prompt that starts a "
                              "turn; paste it again when the agent is done.", "warning")
        if self.session is None:
            self._pending_prompts.append(text)
            await self.notice("Starting… the prompt is sent as soon as the session is ready.")
            return
        if self.command_running:
            self._pending_prompts.append(text)
            await self.notice("The prompt is sent when the command has finished.")
            return
        if self.busy and self.bridge is not None and self.renderer is not None:
            self.bridge.steer(text)
            await self.renderer.show_queued(text)
            return
        await self.send_prompt(text, images)

    async def run_command(self, name: str, args: str) -> None:
        command = self.commands.get(name)
        if command is None and self.session is not None:  # a command file added since
            slash.register_custom_commands(self.commands, self.session)
            command = self.commands.get(name)
        if command is None:
            names = [c.name for c in self.commands.all()]
            await slash.take_action(self, typed.not_found(name, args, names))
            return
        if self.session is None and name not in ("help", "quit", "mouse"):
            await self.notice("The session is still starting; try again in a moment.", "warning")
            return
        if self.busy and not command.while_busy:
            await self.notice(f"/{name} has to wait until the agent is done (Esc stops it).",
                              "warning")
            return
        if command.background:
            if self.command_running:
                await self.notice(f"/{name} has to wait until the last command is done.",
                                  "warning")
                return
            self._command = self.run_worker(
                self._run_command(command, args), name=f"/{name}", group="command"
            )
            return
        await self._run_command(command, args)

    async def _run_command(self, command: slash.SlashCommand, args: str) -> None:
        try:
            await command.handler(self, args)
        except Exception as e:  # a command's failure is a message, never a crash
            await self.notice(f"/{command.name} failed: {e}", "error")
        if command.background and self._pending_prompts and not self.busy:
            prompts, self._pending_prompts = self._pending_prompts, []
            self.call_later(self.send_prompt, "\n\n".join(prompts))

    async def send_prompt(self, text: str, images: Sequence[lt.ImageBlock] = ()) -> None:
        """Start a run with `text`, the files and resources it @-mentions, images and
        pending shell output."""
        if self.bridge is not None:
            self.start_turn(await self.require_input().prompt(text, images))

    def start_turn(self, prompt: typed.SendPrompt) -> None:
        """Run a prompt the input interpreter has read (commands hand theirs here)."""
        if self.bridge is not None:
            self.file_index.invalidate()
            self.bridge.start(prompt.content())

    def require_input(self) -> typed.InputInterpreter:
        """The session's input interpreter, with the TUI's own commands as built-ins."""
        return typed.InputInterpreter(self.require_session(), self.builtin_names, shell=True)

    def run_shell(self, command: str) -> None:
        """`!command`, as a worker of its own that Esc can stop (`tui/user_shell.py`)."""
        self.run_worker(run_user_shell(self, command), name=f"!{command}", group="shell")

    async def notice(self, text: str, level: Level = "info") -> None:
        if self.renderer is not None:
            await self.renderer.notice(text, level)

    # --- keys ---------------------------------------------------------------------------

    @property
    def typing_guard(self) -> TypingGuard:
        return self._typing_guard

    async def on_event(self, event: events.Event) -> None:
        if self._typed_ahead.keep(event):  # before the first frame: for the prompt
            return
        # Every key the main screen gets is typing a dialog opening now must not take.
        if isinstance(event, events.Key) and self.screen is self.main:
            self._typing_guard.key_pressed()
        await super().on_event(event)

    def type_ahead(self, event: events.Key | events.Paste) -> None:
        """A key or paste a dialog did not take (it came too soon to be an answer) goes
        on into the prompt the user was typing in."""
        if isinstance(event, events.Paste):
            self.prompt.paste(event.text)
        elif event.key == "backspace":
            self.prompt.action_delete_left()
        elif event.character:
            self.prompt.type_text(event.character)

    def interrupt(self) -> None:
        if self.shell_running:
            self.workers.cancel_group(self, "shell")
        if self.bridge is not None and self.bridge.interrupt():
            self.status.set_busy("interrupting")

    def action_ctrl_c(self) -> None:
        """Copy a selection; else clear the prompt's text (kept for Up); else stop a working agent
        or a `!command` (as Esc does, an open approval dialog included); only on an idle,
        empty prompt arm "press again to quit", so a stop never turns into a quit."""
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.notify(f"Copied {len(selected):,} characters", timeout=2)
            return
        if self.screen is self.main and self.prompt.text:
            self.prompt.clear_draft()  # Up brings it back
            return
        if self.shell_running or (self.bridge is not None and self.bridge.stoppable):
            self._last_ctrl_c = 0.0
            self.status.set_hint("")
            self.interrupt()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= QUIT_WINDOW_S:
            self.status.set_hint("")
            self.call_later(self.action_quit)
            return
        self._last_ctrl_c = now
        self.status.set_hint("Press Ctrl+C again to quit")
        self.set_timer(QUIT_WINDOW_S, self._clear_quit_hint)

    def _clear_quit_hint(self) -> None:
        if self.is_running and self.screen is self.main:
            self.status.set_hint("")

    def action_cycle_mode(self) -> None:
        if self.screen is not self.main:
            return
        session = self.session
        current = session.mode if session else self.config.permission_mode
        self.set_permission_mode(
            next_permission_mode(current, bypass_offered=self.bypass_offered)
        )

    def set_permission_mode(self, mode: PermissionMode) -> None:
        """Switch the mode now, or when the session is ready if it is still opening."""
        session = self.session
        if session is not None:
            session.set_mode(mode)
        else:
            self._early_mode = mode
        self.config.permission_mode = mode
        self.status.set_mode(mode)

    async def action_quit(self) -> None:
        if self.bridge is not None:
            await self.bridge.stop()
        await self.close_session()
        self.exit(0)

    async def close_session(self) -> None:
        if self.session is not None and not self._closed:
            self._closed = True
            self.notifier.restore()
            if self.session.messages:
                session_id = self.session.session_id
                self.exit_message = (
                    f"Session {session_id} saved. Resume it with: aistack --resume {session_id}"
                )
            try:
                await self.session.close("prompt_input_exit")
            except Exception as e:  # closing must never turn a quit into a traceback
                self.error_message = f"aistack: closing the session failed: {e}"

    async def on_unmount(self) -> None:
        await self.close_session()

    async def hang_up(self, status: int) -> None:
        """The terminal closed (SIGHUP) or SIGTERM came: the turn is interrupted (its
        partial answer kept if it stops within a second), then quit as Ctrl+C twice does,
        with `status` (129, 143)."""
        if self.bridge is not None and self.bridge.interrupt():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.bridge.wait(), HANG_UP_GRACE_S)
        await self.action_quit()
        self.exit(return_code=status)

    def set_mouse_capture(self, enabled: bool | None) -> bool:
        """Switch mouse reporting on or off (None toggles); returns the new state."""
        target = (not self._mouse_enabled) if enabled is None else enabled
        driver: Any = self._driver
        method = "_enable_mouse_support" if target else "_disable_mouse_support"
        if driver is not None and hasattr(driver, method):
            getattr(driver, method)()
        self._mouse_enabled = target
        return target

    def _on_ask(self, request: ApprovalRequest) -> None:
        self.status.set_busy("waiting for approval")
        self.notifier.approval_asked(request.display.summary or request.tool_name)
