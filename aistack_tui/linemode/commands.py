"""The line mode's slash commands, each a few lines over the session facade.

A command gets a `CommandHost` (the session, the renderer to print with, a yes/no
question) and the text after its name. Failures are messages, never a crash of the REPL:
the REPL prints what a command raised. Everything a command changes goes through
`LiveSession`; a command that needs more than the facade offers does not belong here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rich.text import Text

from aistack_tui.linemode.render import LineRenderer
from aistack_tui.permissions.types import PERMISSION_MODES
from aistack_tui.session.config import MODE_NAMES, bypass_on_command_line
from aistack_tui.session.reports import cost_lines, restore_lines, turn_listing

if TYPE_CHECKING:
    from aistack_tui.checkpoints.manager import UndoResult
    from aistack_tui.session.live import LiveSession

KEYS_HELP = (
    "Keys: Enter send · Esc Enter or a trailing \\ new line · Up/Down history · "
    "Ctrl+R search it · Tab complete /commands and @files · Shift+Tab permission mode · "
    "Ctrl+C interrupt (twice at an empty prompt: quit) · Ctrl+D quit"
)


class CommandHost(Protocol):
    """What a command may use of the REPL that runs it."""

    session: LiveSession
    renderer: LineRenderer

    async def confirm(self, question: str) -> bool: ...

    def preload(self, text: str) -> None:
        """Put `text` into the next prompt, ready to edit and send."""
        ...

    def quit(self) -> None: ...

    def command_names(self) -> list[tuple[str, str]]:
        """(name, help) of every command offered, built-in and custom."""
        ...


Handler = Callable[[CommandHost, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class LineCommand:
    name: str
    help: str
    handler: Handler
    args: str = ""


@dataclass
class CommandTable:
    commands: dict[str, LineCommand] = field(default_factory=dict[str, LineCommand])

    def add(self, name: str, help_text: str, args: str = "") -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.commands[name] = LineCommand(name, help_text, handler, args)
            return handler

        return register

    def get(self, name: str) -> LineCommand | None:
        return self.commands.get(name)

    def names(self) -> list[tuple[str, str]]:
        """(name, help) in alphabetical order, for completion."""
        return [(c.name, c.help) for c in sorted(self.commands.values(), key=lambda c: c.name)]


COMMANDS = CommandTable()
command = COMMANDS.add


def _lines(host: CommandHost, lines: list[str]) -> None:
    host.renderer.print(Text("\n".join(lines)))


@command("help", "List the commands and keys")
async def _help(host: CommandHost, args: str) -> None:
    lines = ["Commands:"]
    for cmd in sorted(COMMANDS.commands.values(), key=lambda c: c.name):
        lines.append(f"  /{cmd.name}{' ' + cmd.args if cmd.args else ''} — {cmd.help}")
    custom = [(n, h) for n, h in host.command_names() if COMMANDS.get(n) is None]
    if custom:
        lines.append("Custom commands (docs/commands.md):")
        lines += [f"  /{name} — {help_text}" for name, help_text in custom]
    lines.append("  @path attaches a file to the prompt · !command runs a shell command · "
                 "//text sends a prompt starting with /")
    lines.append(KEYS_HELP)
    _lines(host, lines)


@command("quit", "Quit aistack")
async def _quit(host: CommandHost, args: str) -> None:
    host.quit()


@command("exit", "Quit aistack")
async def _exit(host: CommandHost, args: str) -> None:
    host.quit()


@command("clear", "Start a new conversation (the old one stays in /resume)")
async def _clear(host: CommandHost, args: str) -> None:
    await host.session.new_conversation()
    host.renderer.notice(f"New conversation {host.session.session_id}.")


@command("model", "Show or switch the model (a number from the list or PROVIDER/MODEL)",
         "[MODEL]")
async def _model(host: CommandHost, args: str) -> None:
    session = host.session
    models = session.available_models()
    if not args:
        lines = [f"Model: {session.model}"]
        lines += [f"  {i}. {m}" for i, m in enumerate(models, 1)]
        lines.append("/model N or /model PROVIDER/MODEL switches.")
        _lines(host, lines)
        return
    choice = models[int(args) - 1] if args.isdigit() and 0 < int(args) <= len(models) else args
    await session.switch_model(choice)
    host.renderer.notice(f"Model: {session.model}")


@command("mode", "Show or set the permission mode (Shift+Tab cycles)", "[MODE]")
async def _mode(host: CommandHost, args: str) -> None:
    session = host.session
    if args:
        mode = MODE_NAMES.get(args.strip().lower(), args.strip())
        if mode == "bypassPermissions" and session.mode != mode and not (
            bypass_on_command_line(session.config)
        ):
            # As in the TUI: never one stray command away (issue 22 item 2).
            _lines(host, [
                "bypassPermissions runs every tool call without asking you: edits anywhere "
                "in the project, any command, MCP tools. Only deny rules, protected paths "
                "and commands flagged as dangerous still ask. Switch only in a sandbox or "
                "a throwaway checkout."])
            if not await host.confirm("switch to bypassPermissions? [y/n] "):
                host.renderer.notice(f"Stayed in {session.mode} mode.")
                return
        session.set_mode(mode)
        host.renderer.notice(f"Permission mode: {session.mode}")
        return
    lines = [f"Permission mode: {session.mode}"]
    lines += [f"  {'*' if m == session.mode else ' '} {m}" for m in PERMISSION_MODES]
    _lines(host, lines)


@command("cost", "Tokens and cost of this session")
async def _cost(host: CommandHost, args: str) -> None:
    _lines(host, cost_lines(host.session.usage))


async def _confirm_force(host: CommandHost, result: UndoResult) -> bool:
    _lines(host, [
        "These files were changed after the agent's edit (by you or another program); "
        "restoring overwrites those changes:",
        *(f"  {p}" for p in result.conflicts[:30]),
    ])
    return await host.confirm(f"overwrite {len(result.conflicts)} file(s)? [y/n] ")


@command("undo", "Restore the files the agent changed in its last turn")
async def _undo(host: CommandHost, args: str) -> None:
    session = host.session
    if not session.checkpoints_on:
        host.renderer.notice("Checkpoints are off (settings `checkpoints`): nothing to undo.",
                             "warning")
        return
    result = await session.undo()
    if not result.ok and result.conflicts:
        if not await _confirm_force(host, result):
            host.renderer.notice("Nothing was restored.")
            return
        result = await session.undo(force=True)
    _lines(host, restore_lines(result))


@command("rewind", "Restore files and the conversation to before a turn (lists turns)",
         "[TURN]")
async def _rewind(host: CommandHost, args: str) -> None:
    session = host.session
    if not session.checkpoints_on:
        host.renderer.notice("Checkpoints are off (settings `checkpoints`): nothing to rewind.",
                             "warning")
        return
    if not args:
        _lines(host, turn_listing(session.checkpoint_turns()))
        return
    result = await session.rewind(args)
    if not result.ok and result.conflicts:
        if not await _confirm_force(host, result):
            host.renderer.notice("Nothing was restored.")
            return
        result = await session.rewind(args, force=True)
    _lines(host, restore_lines(result))
    if result.ok and result.prompt:
        host.preload(result.prompt)  # the rewound prompt, ready to edit and resend


@command("compact", "Summarise the conversation to free context", "[INSTRUCTIONS]")
async def _compact(host: CommandHost, args: str) -> None:
    result = await host.session.compact(args)
    if result is None:
        host.renderer.notice("The conversation is too short to compact.")
        return
    host.renderer.notice("Compacted: the conversation is now a summary.")


@command("export", "Write this session as Markdown (default) or JSONL", "[md|jsonl] [PATH]")
async def _export(host: CommandHost, args: str) -> None:
    session = host.session
    parts = args.split(maxsplit=1)
    fmt = "jsonl" if parts and parts[0] == "jsonl" else "md"
    if parts and parts[0] in ("md", "jsonl"):
        parts = parts[1:]
    path = Path(parts[0]).expanduser() if parts else Path(f"aistack-{session.session_id}.{fmt}")
    if not path.is_absolute():
        path = session.cwd / path
    count = await session.export(path, fmt)
    host.renderer.notice(f"Wrote {count} messages to {path}.")


@command("sessions", "List the sessions of this project")
async def _sessions(host: CommandHost, args: str) -> None:
    sessions = await host.session.list_sessions()
    if not sessions:
        host.renderer.notice("No sessions yet.")
        return
    lines = ["Sessions (newest first); /resume ID continues one:"]
    for info in sessions[:20]:
        mark = "*" if info.id == host.session.session_id else " "
        lines.append(f" {mark} {info.id}  {info.title or '(untitled)'}")
    _lines(host, lines)


@command("resume", "Resume an earlier session of this project (lists them)", "[ID]")
async def _resume(host: CommandHost, args: str) -> None:
    if not args:
        await _sessions(host, args)
        return
    await host.session.resume(args)
    count = len(host.session.messages)
    host.renderer.notice(f"Resumed {host.session.session_id} ({count} messages).")


@command("tools", "The tools the model can call")
async def _tools(host: CommandHost, args: str) -> None:
    _lines(host, ["Tools: " + ", ".join(host.session.tool_names())])


@command("permissions", "The permission mode and every rule in force")
async def _permissions(host: CommandHost, args: str) -> None:
    session = host.session
    lines = [f"Mode: {session.mode} (Shift+Tab cycles)"]
    for view in session.permission_rules():
        lines.append(f"  {view.behavior:5} {view.rule}  ({view.source})")
    _lines(host, lines)


@command("mcp", "MCP servers and their status")
async def _mcp(host: CommandHost, args: str) -> None:
    statuses = host.session.mcp_statuses()
    if not statuses:
        host.renderer.notice("No MCP servers are configured.")
        return
    tools = host.session.mcp_tools()
    lines = ["MCP servers:"]
    for status in statuses:
        line = f"  {status.name}: {status.label}"
        if status.error:
            line += f" ({status.error})"
        count = len(tools.get(status.name, [])) or status.tool_count
        if count:
            line += f" · {count} tools"
        lines.append(line)
    _lines(host, lines)
