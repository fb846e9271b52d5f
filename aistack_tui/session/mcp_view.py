"""What front ends do with MCP beyond tools: prompts as slash commands, `@server:uri`
resources in the prompt, and the form a server may ask the user to fill in.

`LiveSession.mcp` returns this view, so the facade stays one class without growing a
method per protocol feature. Every front end calls the same methods: the TUI, the line
mode and print mode expand `/mcp__server__prompt` and attach `@server:uri` alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aistack_tui.llm.types import ContentBlock, TextBlock
from aistack_tui.session.mentions import mentioned_resources, resource_attachment
from aistack_tui.settings.layers import ConfigError

if TYPE_CHECKING:
    from aistack_tui.mcp.elicitation import ElicitationHandler
    from aistack_tui.mcp.manager import McpManager
    from aistack_tui.mcp.remote import RemotePrompt
    from aistack_tui.permissions.engine import PermissionEngine


PROMPT_SERVER_WAIT = 30.0
"""Seconds a server prompt's command waits for its server to finish starting."""


class McpView:
    """The session's MCP prompts, resources and elicitation, for front ends."""

    def __init__(self, manager: McpManager | None, engine: PermissionEngine) -> None:
        self.manager = manager
        self.engine = engine

    # --- prompts --------------------------------------------------------------------

    def _prompts(self) -> dict[str, RemotePrompt]:
        from aistack_tui.mcp.prompts import command_name

        if self.manager is None:
            return {}
        return {command_name(p): p for p in self.manager.remote_prompts()}

    def prompt_commands(self) -> list[tuple[str, str, str]]:
        """(name, description, argument hint) of each server prompt, as slash commands."""
        from aistack_tui.mcp.prompts import argument_hint

        return [
            (name, p.description or f"prompt of MCP server {p.server}", argument_hint(p))
            for name, p in self._prompts().items()
        ]

    async def expand_prompt(self, text: str) -> str | None:
        """The prompt a `/mcp__server__prompt args` line stands for, fetched from the
        server; None when `text` names no server prompt. Raises ConfigError (missing
        arguments, the server failing) with a message for the user."""
        from aistack_tui.mcp.manager import McpCallError
        from aistack_tui.mcp.prompts import PromptArgumentError, parse_arguments, prompt_text

        if not text.startswith("/mcp__") or self.manager is None:
            return None
        name, _, rest = text[1:].partition(" ")
        name = name.strip()
        prompt = self._prompts().get(name)
        if prompt is None and await self._wait_for_server_of(name):
            prompt = self._prompts().get(name)
        if prompt is None:
            return None
        try:
            arguments = parse_arguments(prompt, rest)
            result = await self.manager.get_prompt(prompt.server, prompt.name, arguments)
        except (PromptArgumentError, McpCallError) as e:
            raise ConfigError(str(e)) from e
        return prompt_text(result)

    async def _wait_for_server_of(self, command: str) -> bool:
        """Wait (bounded) for the server a command names when it is still starting: a
        prompt typed, or given on the command line, before its server has connected."""
        manager = self.manager
        server = command.split("__")[1] if command.count("__") >= 2 else ""
        statuses = {s.name: s for s in manager.statuses()} if manager is not None else {}
        if manager is None or server not in statuses or statuses[server].status != "connecting":
            return False
        await manager.wait_ready(PROMPT_SERVER_WAIT)
        return True

    # --- resources ------------------------------------------------------------------

    def resource_mentions(self) -> list[str]:
        """`server:uri` of every listed resource (not templates), for `@` completion."""
        if self.manager is None:
            return []
        return [f"{r.server}:{r.uri}" for r in self.manager.remote_resources() if not r.template]

    async def attach_resources(self, blocks: list[ContentBlock]) -> list[ContentBlock]:
        """`blocks` (a prompt and its file attachments) with a block for each
        `@server:uri` the prompt mentions, read from its server. A resource the
        permission rules deny, or that cannot be read, is attached as its error."""
        from aistack_tui.mcp.manager import McpCallError
        from aistack_tui.mcp.resource_tools import READ_TOOL, read_text
        from aistack_tui.permissions.types import PermissionRequest

        manager = self.manager
        first = blocks[0] if blocks else None
        if manager is None or not isinstance(first, TextBlock):
            return blocks
        servers = {s.name for s in manager.statuses() if s.status == "connected"}
        added: list[ContentBlock] = []
        for server, uri in mentioned_resources(first.text, servers):
            request = PermissionRequest(READ_TOOL, {"server": server, "uri": uri},
                                        read_only=True)
            decision = self.engine.check(request)
            if decision.behavior == "deny":
                added.append(TextBlock(text=resource_attachment(
                    server, uri, "", error=decision.reason.replace('"', "'"))))
                continue
            try:
                body = await read_text(manager, server, uri)
            except McpCallError as e:
                added.append(TextBlock(
                    text=resource_attachment(server, uri, "", error=str(e).replace('"', "'"))))
                continue
            added.append(TextBlock(text=resource_attachment(server, uri, body)))
        return [*blocks, *added]

    # --- elicitation ----------------------------------------------------------------

    def use_elicitation(self, handler: ElicitationHandler | None) -> None:
        """Who answers a server's request for input; None: declined, nobody is there."""
        from aistack_tui.mcp.elicitation import NO_ONE_TO_ASK, DeclineElicitation

        if self.manager is not None:
            self.manager.elicitation = handler or DeclineElicitation(NO_ONE_TO_ASK)
