"""Slash commands: a registry of (name, help, handler), and the built-in commands.

A later feature adds a command with one call, `registry.add(SlashCommand(...))`, or the
`@command` decorator below; completion and `/help` pick it up automatically. Handlers get
a `CommandHost` (the app, seen only through what commands need: the session facade, the
conversation, the prompt, notices) and the text after the command name. They never import
the app, so the app, this module and `session_commands` form no import circle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from textual.app import App

from aistack_tui.session.input import (
    CommandFailed,
    InputAction,
    InputInterpreter,
    NoInput,
    RunBuiltin,
    RunShell,
    SendPrompt,
    UnknownCommand,
    did_you_mean,
    unavailable_message,
)
from aistack_tui.tui.permissions_view import add_rule, added_message, permissions_listing, revoke
from aistack_tui.tui.screens.rule_editor import RuleEditorScreen

if TYPE_CHECKING:
    from aistack_tui.permissions.types import PermissionMode
    from aistack_tui.session.live import LiveSession
    from aistack_tui.session.mentions import FileIndex
    from aistack_tui.skills.commands import CustomCommand
    from aistack_tui.tui.renderer import Level
    from aistack_tui.tui.widgets.conversation import Conversation
    from aistack_tui.tui.widgets.prompt_input import PromptInput
    from aistack_tui.tui.widgets.status_bar import StatusBar


class CommandHost(Protocol):
    """What a slash command may use of the app."""

    @property
    def commands(self) -> SlashRegistry: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def status(self) -> StatusBar: ...
    @property
    def prompt(self) -> PromptInput: ...
    @property
    def file_index(self) -> FileIndex: ...
    @property
    def textual_app(self) -> App[Any]: ...
    @property
    def bypass_offered(self) -> bool: ...

    def require_session(self) -> LiveSession: ...
    async def notice(self, text: str, level: Level = "info") -> None: ...
    async def new_conversation(self) -> None: ...
    async def switch_model(self, model_string: str) -> None: ...
    def open_model_picker(self) -> None: ...
    async def resume_session(self, session_id: str) -> None: ...
    def open_session_picker(self) -> None: ...
    async def send_prompt(self, text: str) -> None: ...
    def require_input(self) -> InputInterpreter: ...
    def start_turn(self, prompt: SendPrompt) -> None: ...
    async def run_command(self, name: str, args: str) -> None: ...
    def run_shell(self, command: str) -> object: ...
    def copy_to_clipboard(self, text: str) -> None: ...
    def set_mouse_capture(self, enabled: bool | None) -> bool: ...
    def set_permission_mode(self, mode: PermissionMode) -> None: ...
    async def action_quit(self) -> None: ...


Handler: TypeAlias = Callable[[CommandHost, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    help: str
    handler: Handler
    args: str = ""
    """How the arguments look, for /help (`[MODEL]`)."""
    while_busy: bool = False
    """True when the command may run while the agent is working."""
    background: bool = False
    """Run in a worker: it waits on the model or a dialog (prompts typed meanwhile wait)."""


class SlashRegistry:
    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}

    def add(self, command: SlashCommand) -> None:
        self._commands[command.name] = command

    def get(self, name: str) -> SlashCommand | None:
        return self._commands.get(name)

    def all(self) -> list[SlashCommand]:
        return sorted(self._commands.values(), key=lambda c: c.name)

    def matches(self, prefix: str) -> list[SlashCommand]:
        """Commands starting with `prefix`, then those merely containing it."""
        starts = [c for c in self.all() if c.name.startswith(prefix)]
        inside = [c for c in self.all() if prefix in c.name and c not in starts]
        return starts + inside


    def command(self, name: str, help: str, args: str = "", *, while_busy: bool = False,
                background: bool = False) -> Callable[[Handler], Handler]:
        """A decorator adding the decorated handler to this registry."""

        def register(handler: Handler) -> Handler:
            self.add(SlashCommand(name, help, handler, args, while_busy, background))
            return handler

        return register


BUILTIN = SlashRegistry()
command = BUILTIN.command


def builtin_commands(*more: Iterable[SlashCommand]) -> SlashRegistry:
    """A fresh registry holding the built-in commands and `more` (each app can add its
    own; the app passes `session_commands.COMMANDS`)."""
    registry = SlashRegistry()
    for cmd in BUILTIN.all():
        registry.add(cmd)
    for group in more:
        for cmd in group:
            registry.add(cmd)
    return registry


def custom_command(found: CustomCommand) -> SlashCommand:
    """A command file (`.claude/commands/review.md`) as `/review`: its text, arguments
    filled in, is sent as the prompt, with its `allowed-tools` allowed for that run."""

    async def run(app: CommandHost, args: str) -> None:
        await take_action(app, await app.require_input().command(found.name, args))

    return SlashCommand(found.name, found.description, run, found.argument_hint)


def register_custom_commands(registry: SlashRegistry, session: LiveSession) -> list[str]:
    """Add the session's custom commands (a built-in keeps its name); the problems found
    loading them, for the user to see."""
    found = session.custom_commands().without(cmd.name for cmd in registry.all())
    for custom in found.commands.values():
        registry.add(custom_command(custom))
    return found.problems


def mcp_prompt_command(name: str, help: str, hint: str) -> SlashCommand:
    """An MCP server's prompt as `/mcp__server__prompt ARGS`: fetched from the server
    with the arguments, and sent as the prompt."""

    async def run(app: CommandHost, args: str) -> None:
        action = await app.require_input().command(name, args)
        if isinstance(action, UnknownCommand):
            await app.notice(f"/{name} is no longer offered by its server.", "warning")
            return
        await take_action(app, action)

    return SlashCommand(name, help, run, hint, background=True)


def register_mcp_prompts(registry: SlashRegistry, session: LiveSession) -> None:
    """Add the prompts of the servers connected so far (called again as servers connect)."""
    for name, help, hint in session.mcp.prompt_commands():
        if registry.get(name) is None:
            registry.add(mcp_prompt_command(name, help, hint))


async def take_action(app: CommandHost, action: InputAction) -> None:
    """Render what the input interpreter made of a command (`session/input.py`)."""
    match action:
        case SendPrompt():
            app.start_turn(action)
        case RunBuiltin(available=False):
            await app.notice(unavailable_message(action, "the TUI"), "warning")
        case RunBuiltin(name=name, args=args):
            await app.run_command(name, args)
        case RunShell(command=command):
            app.run_shell(command)
        case UnknownCommand(name=name):
            await app.notice(f"Unknown command /{name}: type /help for the list."
                             f"{did_you_mean(action)}", "error")
        case CommandFailed(name=name, message=message):
            await app.notice(f"/{name} failed: {message}", "error")
        case NoInput():
            pass


# --- the built-in commands ---------------------------------------------------------------


@command("help", "List the commands and keys", while_busy=True)
async def _help(app: CommandHost, args: str) -> None:
    lines = ["Commands:"]
    for cmd in app.commands.all():
        lines.append(f"  /{cmd.name}{' ' + cmd.args if cmd.args else ''} — {cmd.help}")
    lines += [
        "Keys: Enter send · Shift+Enter/Ctrl+J/\\+Enter new line · Up/Down history · "
        "Ctrl+R search history · Tab complete",
        "      Esc or Ctrl+C interrupt · Shift+Tab permission mode · Ctrl+C twice (idle) quit",
        "      PageUp/PageDown scroll · Home/End (empty prompt) top/bottom · mouse: select, "
        "Ctrl+C copies",
        "      @path attaches a file · !command runs a shell command",
    ]
    await app.notice("\n".join(lines))


@command("clear", "Start a new conversation (the old one stays in /resume)")
async def _clear(app: CommandHost, args: str) -> None:
    await app.new_conversation()


@command("model", "Switch the model (picker without an argument)", "[PROVIDER/MODEL]")
async def _model(app: CommandHost, args: str) -> None:
    if args:
        await app.switch_model(args)
    else:
        app.open_model_picker()


@command("cost", "Tokens and cost of this session", while_busy=True)
async def _cost(app: CommandHost, args: str) -> None:
    from aistack_tui.session.reports import cost_lines

    await app.notice("\n".join(cost_lines(app.require_session().usage)))


@command("permissions", "The mode, every rule by layer, the session grants; "
         "`revoke N` takes a grant back, `add` adds a rule", "[revoke N|add]",
         while_busy=True)
async def _permissions(app: CommandHost, args: str) -> None:
    session = app.require_session()
    verb, _, which = args.partition(" ")
    if verb == "revoke" and which.strip():
        message, ok = revoke(session, which.strip())
        await app.notice(message, "info" if ok else "warning")
    elif verb == "add" and which.strip():
        message, ok = add_rule(session, which)
        await app.notice(message, "info" if ok else "warning")
    elif verb == "add":
        def added(message: str | None) -> None:
            if message:
                app.textual_app.call_later(app.notice, message)

        app.textual_app.push_screen(RuleEditorScreen(
            session.add_permission_rule,
            lambda behavior, rule, where: added_message(session, behavior, rule, where),
        ), added)
    elif args:
        await app.notice("Usage: /permissions, /permissions revoke N (or the rule), "
                         "/permissions add [allow|ask|deny LAYER RULE].", "warning")
    else:
        await app.notice(permissions_listing(session))


@command("resume", "Resume an earlier session of this project")
async def _resume(app: CommandHost, args: str) -> None:
    if args:
        await app.resume_session(args)
    else:
        app.open_session_picker()


@command("sessions", "List and pick sessions of this project")
async def _sessions(app: CommandHost, args: str) -> None:
    app.open_session_picker()


@command("copy", "Copy the last answer (or its Nth code block) to the clipboard", "[N]",
         while_busy=True)
async def _copy(app: CommandHost, args: str) -> None:
    answer = app.conversation.transcript.last_answer()
    if not answer:
        await app.notice("There is no answer to copy yet.", "warning")
        return
    text = answer
    if args:
        blocks = code_blocks(answer)
        try:
            text = blocks[int(args) - 1]
        except (ValueError, IndexError):
            await app.notice(f"The last answer has {len(blocks)} code block(s).", "warning")
            return
    app.copy_to_clipboard(text)
    await app.notice(f"Copied {len(text):,} characters.")


@command("mouse", "Switch mouse capture off (native selection) or on", "[on|off]",
         while_busy=True)
async def _mouse(app: CommandHost, args: str) -> None:
    enabled = app.set_mouse_capture(None if not args else args.lower() in ("on", "1", "yes"))
    state = "on" if enabled else "off: select text with the terminal as usual"
    await app.notice(f"Mouse capture {state}.")


@command("bashes", "List the background shells; `stop ID` (or `stop all`) ends them",
         "[stop ID|all]", while_busy=True)
async def _bashes(app: CommandHost, args: str) -> None:
    shells = app.require_session().background_shells
    verb, _, which = args.partition(" ")
    if verb == "stop" and which.strip():
        chosen = shells.running() if which.strip() == "all" else [
            s for s in shells.shells.values() if s.id == which.strip()]
        if not chosen:
            await app.notice(f"No background shell {which.strip()!r}.", "warning")
            return
        for shell in chosen:
            await shells.stop(shell)
        await app.notice("Stopped " + ", ".join(s.id for s in chosen) + ".")
    elif args:
        await app.notice("Usage: /bashes, or /bashes stop ID (or all).", "warning")
    elif not shells.shells:
        await app.notice("No background shells in this session.")
    else:
        await app.notice("\n".join(
            f"{s.id}  {s.state():<18} {s.description or s.command}"
            for s in shells.shells.values()))


@command("quit", "Quit aistack", while_busy=True)
async def _quit(app: CommandHost, args: str) -> None:
    await app.action_quit()


def code_blocks(markdown: str) -> list[str]:
    """Fenced code blocks of a markdown answer, without the fences."""
    blocks: list[str] = []
    current: list[str] | None = None
    fence = ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if current is None and stripped.startswith(("```", "~~~")):
            fence, current = stripped[:3], []
        elif current is not None and stripped.startswith(fence):
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks
