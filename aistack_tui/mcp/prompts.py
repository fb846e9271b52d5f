"""A server's prompts as slash commands: `/mcp__<server>__<prompt> ARGS`.

The name is the one Claude Code gives them, so a user's habit and a script's `aistack -p
"/mcp__github__review 42"` carry over. Arguments are given in the prompt's order,
separated by spaces (quote one that holds spaces), or by name as `name=value`; a
missing required argument is an error naming it, before anything is sent. The messages
the server returns become the text of the user's prompt: text as is, embedded resources
with their URI, other content described.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from aistack_tui.mcp.remote import RemotePrompt
from aistack_tui.mcp.tools import tool_name

if TYPE_CHECKING:
    import mcp_types


class PromptArgumentError(ValueError):
    """The arguments typed do not fit the prompt; the message says how to call it."""


def command_name(prompt: RemotePrompt) -> str:
    """`mcp__<server>__<prompt>`, made safe the same way tool names are."""
    return tool_name(prompt.server, prompt.name)


def argument_hint(prompt: RemotePrompt) -> str:
    """`CITY [STATE]`: required arguments bare, optional ones in brackets."""
    return " ".join(name if required else f"[{name}]" for name, required, _ in prompt.arguments)


def parse_arguments(prompt: RemotePrompt, text: str) -> dict[str, str]:
    """The prompt's arguments from what was typed after the command's name."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    names = [name for name, _, _ in prompt.arguments]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    if len(positional) > len(free):
        if not free and not names:
            raise PromptArgumentError(f"/{command_name(prompt)} takes no arguments")
        # More words than arguments: the last argument takes the rest.
        positional = [*positional[: len(free) - 1], " ".join(positional[len(free) - 1 :])]
    values.update(zip(free, positional, strict=False))
    missing = [name for name, required, _ in prompt.arguments if required and name not in values]
    if missing:
        raise PromptArgumentError(
            f"/{command_name(prompt)} needs {', '.join(missing)}: "
            f"/{command_name(prompt)} {argument_hint(prompt)}".rstrip()
        )
    return values


def _content_text(content: object) -> str:
    kind = getattr(content, "type", "")
    if kind == "text":
        return str(getattr(content, "text", ""))
    if kind == "resource":
        res = getattr(content, "resource", None)
        uri = getattr(res, "uri", "")
        text = getattr(res, "text", None)
        if isinstance(text, str):
            return f"[resource {uri}]\n{text}"
        return f"[binary resource {uri} ({getattr(res, 'mime_type', None) or 'unknown type'})]"
    if kind == "resource_link":
        return f"[resource link {getattr(content, 'uri', '')}]"
    return f"[{kind or 'unknown'} content not shown]"


def prompt_text(result: mcp_types.GetPromptResult) -> str:
    """The server's messages as one prompt; replies it scripted are labelled as such."""
    parts: list[str] = []
    for message in result.messages:
        text = _content_text(message.content)
        parts.append(text if message.role == "user" else f"(assistant) {text}")
    return "\n\n".join(parts)
