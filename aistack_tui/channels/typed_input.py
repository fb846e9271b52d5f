"""What a channel's user typed, read by the input interpreter (`session/input.py`), as
every front end reads it: either the prompt to send (a custom command or an MCP server's
prompt expanded, the `@path` files and `@server:uri` resources attached) or the reply to
show instead (an unknown command, a built-in of another front end). A channel's own
commands (Telegram's `/new`, `/stop`...) are taken before the text gets here.

A chat or an editor runs no `!command`: nobody at a terminal would see a shell command
run outside the permission rules, so `!...` is a prompt there, as it always was.
"""

from __future__ import annotations

from aistack_tui.channels.bus import ChannelSession
from aistack_tui.channels.messages import Prompt
from aistack_tui.llm.types import ContentBlock, TextBlock
from aistack_tui.session.input import (
    CommandFailed,
    InputInterpreter,
    NoInput,
    RunBuiltin,
    RunShell,
    SendPrompt,
    UnknownCommand,
    did_you_mean,
    unavailable_message,
)


async def read_prompt(session: ChannelSession, prompt: Prompt, front_end: str
                      ) -> list[ContentBlock] | str:
    """The blocks to send for `prompt`, or the words to answer with instead. The text
    of a prompt given as blocks is its first block; the other blocks (images, an
    editor's context) go with it."""
    blocks: list[ContentBlock] = [TextBlock(text=prompt)] if isinstance(prompt, str) \
        else list(prompt)
    first = blocks[0] if blocks else None
    if not isinstance(first, TextBlock):
        return blocks
    action = await InputInterpreter(session).submit(first.text, blocks[1:])
    match action:
        case SendPrompt():
            return action.content()
        case UnknownCommand(name=name):
            return f"Unknown command /{name}.{did_you_mean(action)}"
        case RunBuiltin():
            return unavailable_message(action, front_end)
        case CommandFailed(name=name, message=message):
            return f"/{name} failed: {message}"
        case RunShell() | NoInput():  # no shell commands here; no text: sent as it came
            return blocks
