"""The permission mode in the TUI: the Shift+Tab cycle and `/mode`.

bypassPermissions runs every tool call without asking, so it is never one stray key
away. Shift+Tab offers it only when the session was started in it from the command line
(`--permission-mode bypassPermissions`, `--dangerously-skip-permissions`), as Claude
Code does; and then it sits between acceptEdits and plan, so a trip from plan back to
default never passes through it (the cycle is `session.config.next_permission_mode`,
shared with the line mode). Any other way in (`/mode bypass`) asks first, and every
switch by `/mode` leaves a line in the conversation.
"""

from __future__ import annotations

from rich.text import Text

from aistack_tui.permissions.types import PermissionMode
from aistack_tui.session.config import MODE_NAMES
from aistack_tui.tui.screens.question import QuestionScreen, ask
from aistack_tui.tui.slash import CommandHost, SlashRegistry

BYPASS: PermissionMode = "bypassPermissions"


MODE_HELP: dict[PermissionMode, str] = {
    "default": "reads run; edits, commands and the rest ask",
    "acceptEdits": "edits inside the project run too; commands still ask",
    "plan": "read-only: the model plans, nothing is changed",
    BYPASS: "everything runs without asking, except deny rules, protected paths and "
            "dangerous commands",
}

COMMANDS = SlashRegistry()


def mode_listing(current: str) -> str:
    lines = ["Permission modes (/mode NAME switches, Shift+Tab cycles):"]
    for mode, help_text in MODE_HELP.items():
        mark = "*" if mode == current else " "
        lines.append(f"  {mark} {mode} — {help_text}")
    return "\n".join(lines)


@COMMANDS.command("mode", "Show or switch the permission mode",
                  "[default|acceptEdits|plan|bypassPermissions]", while_busy=True,
                  background=True)
async def _mode(app: CommandHost, args: str) -> None:
    current = app.require_session().mode
    name = args.strip()
    if not name:
        await app.notice(mode_listing(current))
        return
    mode = MODE_NAMES.get(name.lower())
    if mode is None:
        await app.notice(f"Unknown mode {name}: /mode lists them.", "error")
        return
    if mode == current:
        await app.notice(f"Already in {mode} mode.")
        return
    if mode == BYPASS and not app.bypass_offered and not await _confirm_bypass(app, current):
        await app.notice(f"Stayed in {current} mode.")
        return
    app.set_permission_mode(mode)
    if mode == BYPASS:
        await app.notice(f"⚠ Permission mode: {BYPASS}: {MODE_HELP[BYPASS]}. "
                         "Shift+Tab or /mode default leaves it.", "warning")
    else:
        await app.notice(f"Permission mode: {mode} ({MODE_HELP[mode]}).")


async def _confirm_bypass(app: CommandHost, current: str) -> bool:
    body = Text(
        "Every tool call will run without asking you: edits anywhere in the project, any "
        "command, MCP tools. Only deny rules, protected paths (.git/, .aistack/, shell "
        "start-up files) and commands flagged as dangerous still ask.\n\n"
        "Switch only in a sandbox or a throwaway checkout."
    )
    return await ask(app.textual_app, QuestionScreen(
        f"Switch to {BYPASS}?", body,
        yes="Yes, run tool calls without asking", no=f"No, stay in {current} mode",
    ))
