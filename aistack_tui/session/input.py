"""One input interpreter for every front end: what a person typed, as an action.

The TUI, the line mode, print mode (a `-p` prompt and each stream-json user message), the
ACP agent and the Telegram gateway all read a typed line the same way, here:

- `/name args` is a command. A built-in of the front end comes first, then a custom
  command file (`.claude/commands/name.md`, its `$ARGUMENTS` filled in and its
  `` !`cmd` `` lines run), then an MCP server's prompt (`/mcp__server__prompt args`),
  then a built-in another front end has (`RunBuiltin(available=False)`: the front end
  says where it works). Anything else is an `UnknownCommand`, with the closest name as
  a suggestion.
- `//text` sends `/text` as a prompt; a first word with a `/` in it (`/etc/hosts why?`)
  is a path, never a command, so it is a prompt as typed.
- `!command` runs the user's own shell command, in the front ends that offer it (the
  terminal ones: the others send `!...` as a prompt, as they always did, since nobody
  at a pipe, an editor or a chat would see a shell run outside the permission rules).
- Anything else is a prompt. Every prompt, a command's expansion too, gets its
  `@path` files (beneath the project root) and `@server:uri` resources attached the same
  way (`session/mentions.py`, `session/mcp_view.py`).

The actions are plain values; a front end only renders them (and runs its built-ins).
`parse_input` is the pure first step, for a front end that decides something before any
I/O (the TUI steers a running turn with the text as typed).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from aistack_tui.llm.types import ContentBlock
from aistack_tui.session.mentions import prompt_blocks
from aistack_tui.settings.layers import ConfigError

if TYPE_CHECKING:
    from aistack_tui.session.mcp_view import McpView
    from aistack_tui.skills.commands import CommandSet

KNOWN_BUILTINS: frozenset[str] = frozenset({
    # the TUI
    "add-dir", "agents", "bashes", "clear", "compact", "config", "context", "copy", "cost",
    "doctor", "exit", "export", "help", "hooks", "init", "login", "mcp", "memory", "mode",
    "model", "mouse", "permissions", "quit", "resume", "rewind", "sessions", "skills",
    "status", "undo",
    # the line mode's own
    "tools",
    # the Telegram gateway's own
    "new", "start", "stop",
})
"""Every built-in command some front end has. A name here that the front end in use does
not run is still recognised (`RunBuiltin(available=False)`), so `/undo` in print mode says
where it works instead of reaching the model as a prompt. A test keeps each front end's
table inside this set."""

SERVER_PROMPT_PREFIX = "mcp__"


# --- what a line is, before any I/O ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class EmptyLine:
    """Nothing but white space."""


@dataclass(frozen=True, slots=True)
class PromptLine:
    """Text for the model (a `//` escape already taken off)."""

    text: str


@dataclass(frozen=True, slots=True)
class ShellLine:
    """`!command`."""

    command: str


@dataclass(frozen=True, slots=True)
class CommandLine:
    """`/name args`."""

    name: str
    args: str


InputLine: TypeAlias = EmptyLine | PromptLine | ShellLine | CommandLine


def parse_input(text: str, *, shell: bool = True) -> InputLine:
    """What `text` is, by its form alone; `shell`: whether `!command` is a command."""
    stripped = text.strip()
    if not stripped:
        return EmptyLine()
    if stripped.startswith("//"):
        return PromptLine(stripped[1:])
    if stripped.startswith("/"):
        name, *rest = stripped[1:].split(maxsplit=1) or [""]
        if name and "/" not in name:
            return CommandLine(name, rest[0].strip() if rest else "")
        return PromptLine(text)
    if shell and text.startswith("!") and text[1:].strip():
        return ShellLine(text[1:].strip())
    return PromptLine(text)


# --- what to do about it ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SendPrompt:
    """Start a turn with `blocks`: the prompt's text, the files and resources it
    mentions, then what the front end attached (images, an editor's context)."""

    text: str
    """The prompt as the model reads it (a command's expansion, the `//` escape undone)."""
    blocks: tuple[ContentBlock, ...]
    command: str | None = None
    """The custom command or server prompt that produced it (`review`), if any."""

    def content(self) -> list[ContentBlock]:
        """The blocks as `LiveSession.run` takes them."""
        return list(self.blocks)


@dataclass(frozen=True, slots=True)
class RunBuiltin:
    """A built-in command: the front end runs it (or, not `available` there, says so)."""

    name: str
    args: str
    available: bool


@dataclass(frozen=True, slots=True)
class RunShell:
    """`!command`: the user's own shell command (`LiveSession.run_user_command`)."""

    command: str


@dataclass(frozen=True, slots=True)
class UnknownCommand:
    """`/name` is no command here; `suggestion` is the closest one, if any is close."""

    name: str
    suggestion: str | None = None


@dataclass(frozen=True, slots=True)
class CommandFailed:
    """A custom command or server prompt that could not be expanded (a missing
    argument, a server error, a bad `allowed-tools` rule): `message` says why."""

    name: str
    message: str


@dataclass(frozen=True, slots=True)
class NoInput:
    """Nothing was typed: nothing to do."""


InputAction: TypeAlias = SendPrompt | RunBuiltin | RunShell | UnknownCommand | CommandFailed \
    | NoInput


class InputSession(Protocol):
    """What the interpreter uses of the session facade (`LiveSession`)."""

    @property
    def project_root(self) -> Path: ...
    @property
    def mcp(self) -> McpView: ...

    def custom_commands(self) -> CommandSet: ...
    async def prepare_command_prompt(self, text: str, allowed_tools: Sequence[str]
                                     ) -> str: ...


class InputInterpreter:
    """Turns typed text into an `InputAction` for one front end of one session.

    `builtins` are the commands this front end runs itself; `shell` whether it runs
    `!command`. Everything else is the same for every front end.
    """

    def __init__(self, session: InputSession, builtins: Collection[str] = (), *,
                 shell: bool = False) -> None:
        self.session = session
        self.builtins = frozenset(builtins)
        self.shell = shell

    def parse(self, text: str) -> InputLine:
        """What `text` is by its form, as this front end reads it (with or without `!`)."""
        return parse_input(text, shell=self.shell)

    async def submit(self, text: str, attachments: Sequence[ContentBlock] = ()
                     ) -> InputAction:
        """The action for `text`; `attachments` go with it if it turns out a prompt."""
        return await self.act(self.parse(text), attachments)

    async def act(self, line: InputLine, attachments: Sequence[ContentBlock] = ()
                  ) -> InputAction:
        """The action for an already parsed line."""
        match line:
            case EmptyLine():
                return NoInput() if not attachments else await self.prompt("", attachments)
            case PromptLine(text=text):
                return await self.prompt(text, attachments)
            case ShellLine(command=command):
                return RunShell(command)
            case CommandLine(name=name, args=args):
                return await self.command(name, args, attachments)

    async def command(self, name: str, args: str, attachments: Sequence[ContentBlock] = ()
                      ) -> InputAction:
        """`/name args`: a built-in here, a custom command, a server prompt, a built-in
        elsewhere, or unknown, in that order."""
        if name in self.builtins:
            return RunBuiltin(name, args, available=True)
        found = self.session.custom_commands().get(name)
        if found is not None:
            try:
                text = await self.session.prepare_command_prompt(found.expand(args),
                                                                 found.allowed_tools)
            except ConfigError as e:
                return CommandFailed(name, str(e))
            return await self.prompt(text, attachments, command=name)
        if name.startswith(SERVER_PROMPT_PREFIX):
            try:
                text = await self.session.mcp.expand_prompt(f"/{name} {args}".rstrip())
            except ConfigError as e:
                return CommandFailed(name, str(e))
            if text is not None:
                return await self.prompt(text, attachments, command=name)
        return not_found(name, args, self.known_names())

    async def prompt(self, text: str, attachments: Sequence[ContentBlock] = (), *,
                     command: str | None = None) -> SendPrompt:
        """`text` as a prompt: its `@path` files and `@server:uri` resources attached."""
        blocks = [*prompt_blocks(text, self.session.project_root), *attachments]
        blocks = await self.session.mcp.attach_resources(blocks)
        return SendPrompt(text, tuple(blocks), command)

    def known_names(self) -> list[str]:
        """Every command name this front end answers to: its built-ins, the custom
        commands and the server prompts connected so far (for suggestions)."""
        names = set(self.builtins)
        try:
            names.update(self.session.custom_commands().names())
        except OSError:  # a command folder that cannot be read: no names from it
            pass
        names.update(name for name, _, _ in self.session.mcp.prompt_commands())
        return sorted(names)


def not_found(name: str, args: str, candidates: Collection[str]) -> RunBuiltin | UnknownCommand:
    """`/name` when the front end has no such command of its own (`candidates` are the
    ones it has): another front end's built-in, or unknown with the closest name."""
    if name in KNOWN_BUILTINS:
        return RunBuiltin(name, args, available=False)
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
    return UnknownCommand(name, close[0] if close else None)


def did_you_mean(action: UnknownCommand) -> str:
    """The suggestion every front end adds to its "unknown command" line, or nothing."""
    return f" Did you mean /{action.suggestion}?" if action.suggestion else ""


def unavailable_message(action: RunBuiltin, front_end: str) -> str:
    """Why a built-in of another front end does nothing here."""
    return f"/{action.name} is not available in {front_end}."
