"""What a client program's control requests reach beyond the session facade: its
`hooks=` callbacks, its in-process MCP servers, context usage, file rewind, MCP
reconnect and toggle, stopping a background shell.

`LiveSessionExtras` implements `control.SessionExtras` for a live session: each answer is
made from what the session already knows (its context report, its checkpoints, its MCP
manager), in the shapes the Claude Agent SDK reads. `mcp_relay` carries an SDK MCP
server's JSON-RPC to the client and back as `mcp_message` requests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aistack_tui.bootstrap import join_client_hooks
from aistack_tui.json_values import as_object
from aistack_tui.print_mode.control import ControlChannel, ControlError

if TYPE_CHECKING:
    from aistack_tui.mcp.sdk_transport import McpRelay
    from aistack_tui.session.live import LiveSession


def callback_caller(
    channel: ControlChannel,
) -> Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]]:
    """Runs one of the client's hook callbacks: a `hook_callback` request (`callback_id`,
    `input`, `tool_use_id`), answered with the hook's output."""

    async def call(callback_id: str, hook_input: dict[str, Any],
                   tool_use_id: str | None) -> dict[str, Any]:
        return await channel.request(
            "hook_callback",
            {"callback_id": callback_id, "input": hook_input, "tool_use_id": tool_use_id},
        )

    return call


def mcp_relay(channel: ControlChannel) -> McpRelay:
    """An SDK MCP server's messages as `mcp_message` requests; the client answers with
    the server's JSON-RPC response in `mcp_response`."""

    async def relay(name: str, message: dict[str, Any]) -> dict[str, Any] | None:
        answer = await channel.request("mcp_message",
                                       {"server_name": name, "message": message})
        return as_object(answer.get("mcp_response"))

    return relay


class LiveSessionExtras:
    """`control.SessionExtras` over a live session and the channel to its client."""

    def __init__(self, session: LiveSession, channel: ControlChannel) -> None:
        self.session = session
        self.channel = channel

    def join_hooks(self, hooks: Any) -> None:
        join_client_hooks(self.session, hooks, callback_caller(self.channel))

    async def context_usage(self) -> dict[str, Any]:
        """The context window by category, in the shape of Claude Code's `/context`."""
        session = self.session
        report = await session.context_report()
        fixed = report.system_prompt_tokens + report.tool_tokens
        used = max(report.used_tokens, fixed)
        categories = [
            {"name": "System prompt", "tokens": report.system_prompt_tokens,
             "color": "promptBorder"},
            {"name": "System tools", "tokens": report.tool_tokens, "color": "inactive"},
            {"name": "Messages", "tokens": used - fixed, "color": "purple"},
            {"name": "Free space", "tokens": max(0, report.window - used), "color": "promptBorder"},
        ]
        mcp_tools = [
            {"name": f"mcp__{server}__{tool}", "serverName": server, "tokens": 0,
             "isLoaded": True}
            for server, tools in session.mcp_tools().items() for tool in tools
        ]
        settings = session.config.loaded.settings
        return {
            "categories": categories,
            "totalTokens": used,
            "maxTokens": report.window,
            "rawMaxTokens": report.window,
            "percentage": round(100 * used / report.window, 2) if report.window else 0.0,
            "model": session.model,
            "isAutoCompactEnabled": settings.compaction.auto_ratio < 1,
            "autoCompactThreshold": int(report.window * settings.compaction.auto_ratio),
            "memoryFiles": [],
            "mcpTools": mcp_tools,
            "agents": [],
            "gridRows": [],
            "apiUsage": None,
        }

    async def rewind_files(self, user_message_id: str, dry_run: bool) -> dict[str, Any]:
        """Files back to before the turn that `user_message_id` (the turn's prompt, as
        `--replay-user-messages` gives its `uuid`) started; the conversation stays."""
        session = self.session
        checkpoints = session.checkpoints
        if checkpoints is None:
            raise ControlError("file checkpoints are off (settings `checkpoints`)")
        turns = [t.turn_id for t in checkpoints.list_turns(session.session_id)]
        if dry_run:
            return {"canRewind": user_message_id in turns}
        result = await checkpoints.rewind(session.session_id, user_message_id)
        if not result.ok:
            raise ControlError(result.message)
        return {"canRewind": True, "filesChanged": [*result.restored, *result.removed]}

    async def mcp_reconnect(self, name: str) -> None:
        status = await self.session.mcp_reconnect(name)
        if status.status != "connected":
            raise ControlError(f"MCP server {name!r} did not reconnect: {status.error}")

    async def mcp_toggle(self, name: str, enabled: bool) -> None:
        mcp = self.session.extensions.mcp
        if mcp is None or name not in {s.name for s in mcp.statuses()}:
            raise ControlError(f"no MCP server {name!r}")
        status = await mcp.set_enabled(name, enabled)
        if enabled and status.status != "connected":
            raise ControlError(f"MCP server {name!r} did not start: {status.error}")

    async def stop_task(self, task_id: str) -> None:
        """Stop a background shell (`Bash` with `run_in_background`, whose id the tool
        result gives), as Claude Code's stop_task does; a Task subagent runs inside its
        turn, and `interrupt` stops that."""
        shells = self.session.background_shells
        shell = shells.shells.get(task_id)
        if shell is None:
            known = ", ".join(shells.shells) or "none"
            raise ControlError(f"no background task {task_id!r} (known: {known})")
        await shells.stop(shell)
