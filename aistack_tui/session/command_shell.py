"""`` !`command` `` in a slash command file: run it first and put its output in the prompt.

Claude Code's command files may hold lines such as ``Current status: !`git status` ``: the
command runs before the prompt is sent, and its output takes the place of the
placeholder. Here each one is a Bash call like the model's: the permission engine decides
with the command file's `allowed-tools` granted (as for the run that follows), and an
allowed command runs through the Bash tool, so in the sandbox with the tier its grant
gives and with its output cut and secrets masked. A command that would ask or is denied
does not run (nobody is asked while a prompt is being prepared): its place says why.
"""

from __future__ import annotations

import re
from pathlib import Path

from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.types import READ_ONLY_GRANT, PermissionRequest
from aistack_tui.tools.base import ToolContext, ToolError, current_grant
from aistack_tui.tools.bash import BashArgs, BashTool

SHELL_PLACEHOLDER = re.compile(r"!`([^`\n]+)`")
SHELL_TIMEOUT_MS = 120_000


def shell_commands(text: str) -> list[str]:
    """The commands of a command file's `` !`...` `` placeholders, in order."""
    return [m.group(1).strip() for m in SHELL_PLACEHOLDER.finditer(text)]


async def inline_shell_output(
    text: str, engine: PermissionEngine, context: ToolContext, cwd: Path
) -> str:
    """`text` with every `` !`command` `` replaced by what the command printed (or why it
    did not run). The caller has granted the command file's `allowed-tools`."""
    if not SHELL_PLACEHOLDER.search(text):
        return text
    outputs: dict[str, str] = {}
    for command in dict.fromkeys(shell_commands(text)):
        outputs[command] = await _run_one(command, engine, context, cwd)

    def replace(m: re.Match[str]) -> str:
        return outputs[m.group(1).strip()]

    return SHELL_PLACEHOLDER.sub(replace, text)


async def _run_one(command: str, engine: PermissionEngine, context: ToolContext,
                   cwd: Path) -> str:
    decision = engine.check(PermissionRequest("Bash", {"command": command}, cwd=cwd))
    if decision.behavior != "allow":
        return (f"[`{command}` was not run: {decision.reason}; add a rule for it to the "
                "command's allowed-tools]")
    # A Bash decision that allows always carries its grant; the narrowest one otherwise.
    token = current_grant.set(decision.grant or READ_ONLY_GRANT)
    try:
        out = await BashTool().run(BashArgs(command=command, timeout=SHELL_TIMEOUT_MS), context)
    except ToolError as e:
        return f"[`{command}` could not run: {e}]"
    finally:
        current_grant.reset(token)
    return str(out.content).rstrip("\n")
