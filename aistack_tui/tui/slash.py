"""Slash commands: a registry of (name, help, handler), and the built-in commands.

A later feature adds a command with one call, `registry.add(SlashCommand(...))`, or the
`@command` decorator below; completion and `/help` pick it up automatically. Handlers get
the app and the text after the command name, and report through `app.notice`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from aistack_tui.tui.app import AistackApp

Handler: TypeAlias = Callable[["AistackApp", str], Awaitable[None]]


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


BUILTIN = SlashRegistry()


def command(name: str, help: str, args: str = "", *, while_busy: bool = False,
            background: bool = False) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        BUILTIN.add(SlashCommand(name, help, handler, args, while_busy, background))
        return handler

    return register


def builtin_commands() -> SlashRegistry:
    """A fresh registry holding the built-in commands (each app can add its own)."""
    # The commands backed by session extensions live in their own module; importing it
    # here (not at the top) registers them without an import cycle.
    from aistack_tui.tui import session_commands  # noqa: F401  # pyright: ignore[reportUnusedImport]

    registry = SlashRegistry()
    for cmd in BUILTIN.all():
        registry.add(cmd)
    return registry


def parse(text: str) -> tuple[str, str] | None:
    """(`name`, `args`) for a prompt that is a slash command, else None."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, args = text[1:].partition(" ")
    return (name.strip(), args.strip()) if name.strip() else None


# --- the built-in commands ---------------------------------------------------------------


@command("help", "List the commands and keys", while_busy=True)
async def _help(app: AistackApp, args: str) -> None:
    lines = ["Commands:"]
    for cmd in app.commands.all():
        lines.append(f"  /{cmd.name}{' ' + cmd.args if cmd.args else ''} — {cmd.help}")
    lines += [
        "Keys: Enter send · Shift+Enter/Ctrl+J new line · Up/Down history · Tab complete",
        "      Esc interrupt · Shift+Tab permission mode · Ctrl+C twice quit",
        "      @path attaches a file · !command runs a shell command",
    ]
    await app.notice("\n".join(lines))


@command("clear", "Start a new conversation (the old one stays in /resume)")
async def _clear(app: AistackApp, args: str) -> None:
    await app.new_conversation()


@command("model", "Switch the model (picker without an argument)", "[PROVIDER/MODEL]")
async def _model(app: AistackApp, args: str) -> None:
    if args:
        await app.switch_model(args)
    else:
        app.open_model_picker()


@command("cost", "Tokens and cost of this session", while_busy=True)
async def _cost(app: AistackApp, args: str) -> None:
    session = app.require_session()
    totals = session.agent.totals
    u = totals.usage
    lines = [
        f"Input {u.input_tokens:,} · output {u.output_tokens:,} · cache read "
        f"{u.cache_read_input_tokens:,} · cache write {u.cache_creation_input_tokens:,} tokens",
        "Cost: " + (f"${totals.cost_usd:.4f}" if totals.cost_usd is not None else "unknown"),
    ]
    for model, usage in totals.by_model.items():
        lines.append(f"  {model}: {usage.input_tokens:,} in / {usage.output_tokens:,} out")
    await app.notice("\n".join(lines))


@command("permissions", "Show the permission mode and rules", while_busy=True)
async def _permissions(app: AistackApp, args: str) -> None:
    engine: Any = app.require_session().engine
    lines = [f"Mode: {engine.mode} (Shift+Tab cycles)"]
    describe = getattr(engine, "describe_rules", None)
    if callable(describe):
        lines.append(str(describe()))
    for layer in getattr(engine, "layers", None) or []:
        for behavior in ("deny", "ask", "allow"):
            rules = getattr(layer, behavior, None) or []
            if rules:
                lines.append(f"  {behavior:5} {', '.join(rules)}  ({layer.source})")
    await app.notice("\n".join(lines))


@command("resume", "Resume an earlier session of this project")
async def _resume(app: AistackApp, args: str) -> None:
    if args:
        await app.resume_session(args)
    else:
        app.open_session_picker()


@command("sessions", "List and pick sessions of this project")
async def _sessions(app: AistackApp, args: str) -> None:
    app.open_session_picker()


@command("copy", "Copy the last answer (or its Nth code block) to the clipboard", "[N]",
         while_busy=True)
async def _copy(app: AistackApp, args: str) -> None:
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
async def _mouse(app: AistackApp, args: str) -> None:
    enabled = app.set_mouse_capture(None if not args else args.lower() in ("on", "1", "yes"))
    state = "on" if enabled else "off: select text with the terminal as usual"
    await app.notice(f"Mouse capture {state}.")


@command("quit", "Quit aistack", while_busy=True)
async def _quit(app: AistackApp, args: str) -> None:
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
