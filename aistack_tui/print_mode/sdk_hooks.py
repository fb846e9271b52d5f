"""The Agent SDK's `hooks=` callbacks: registered by `initialize`, run over `hook_callback`.

The SDK keeps its hook functions in the client process and sends, in its `initialize`
request, each event's matchers with callback ids: `{"PreToolUse": [{"matcher": "Edit",
"hookCallbackIds": ["hook_0"], "timeout": 60, "onFailure": "block"}]}`. They join the
session's hook runner as `HookCallback`s, so they run at the same points as settings
hooks, matched the same way, and their answers are read the same way; running one is a
`hook_callback` control request to the client (`callback_id`, `input`, `tool_use_id`),
whose response is the hook's output.
"""

from __future__ import annotations

from typing import Any, cast

from aistack_tui.agent.hooks import (
    DEFAULT_TIMEOUT,
    HOOK_EVENTS,
    CallbackCaller,
    HookCallback,
    HookGroup,
)
from aistack_tui.print_mode.control import ControlChannel, ControlError


def parse_sdk_hooks(raw: Any) -> dict[str, list[HookGroup]]:
    """initialize's `hooks` as hook groups; ControlError naming what cannot run.

    An event aistack has no point for (`PermissionRequest`, `PostToolUseFailure`,
    `SubagentStart`) is refused rather than dropped: a program may rely on its hook as a
    guard, and must not get a session that quietly runs without it.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ControlError("initialize: hooks must be an object of events")
    out: dict[str, list[HookGroup]] = {}
    for event, matchers in cast(dict[str, Any], raw).items():
        if event not in HOOK_EVENTS:
            raise ControlError(
                f"aistack does not run {event} hooks (it runs {', '.join(HOOK_EVENTS)})"
            )
        if not isinstance(matchers, list):
            raise ControlError(f"initialize: hooks.{event} must be a list")
        out[event] = [_group(event, m) for m in cast(list[Any], matchers)]
    return out


def _group(event: str, raw: Any) -> HookGroup:
    if not isinstance(raw, dict):
        raise ControlError(f"initialize: each of hooks.{event} must be an object")
    entry = cast(dict[str, Any], raw)
    ids = entry.get("hookCallbackIds")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in cast(list[Any], ids)):
        raise ControlError(f"initialize: hooks.{event} needs hookCallbackIds (strings)")
    timeout = entry.get("timeout")
    seconds = (
        float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT
    )
    # The CLI reads any onFailure but "continue" as "block" (the SDK's own comment says).
    blocks = entry.get("onFailure") not in (None, "continue")
    matcher = entry.get("matcher")
    return HookGroup(
        matcher if isinstance(matcher, str) else "",
        tuple(HookCallback(i, seconds, blocks) for i in cast(list[str], ids)),
    )


def callback_caller(channel: ControlChannel) -> CallbackCaller:
    """Runs a callback in the client: one `hook_callback` request, answered with the
    hook's output."""

    async def call(callback_id: str, hook_input: dict[str, Any],
                   tool_use_id: str | None) -> dict[str, Any]:
        return await channel.request(
            "hook_callback",
            {"callback_id": callback_id, "input": hook_input, "tool_use_id": tool_use_id},
        )

    return call
