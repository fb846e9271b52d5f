"""`--permission-prompt-tool stdio`: a permission prompt answered by the client program.

Where the TUI shows a dialog, a client of the stream-json protocol gets a `can_use_tool`
control request (the Claude Agent SDK calls its `can_use_tool` callback with it) and its
answer decides: allow, allow and keep the rule (`updatedPermissions`), or deny with a
message the model reads. An allow may carry `updatedInput`: the call runs with that
input once the rules have judged it (a deny rule still denies). A client that goes
away, or answers with an error, denies.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from aistack_tui.agent.ports import ApprovalDecision, ApprovalKind, ApprovalRequest
from aistack_tui.print_mode.control import ControlChannel, ControlError

_RULE = re.compile(r"^(?P<tool>[^()]+?)(?:\((?P<content>.*)\))?$", re.DOTALL)

# Where a client asks to keep a rule → what aistack does with the suggested rule:
# "session" grants it for this session, a settings file saves it to the project's
# `.aistack/settings.local.json` (the one file aistack writes rules to).
DESTINATIONS: dict[str, ApprovalKind] = {
    "session": "session",
    "localSettings": "save",
    "projectSettings": "save",
    "userSettings": "save",
}


def rule_value(rule: str) -> dict[str, str]:
    """`Bash(npm test)` as Claude Code's `{"toolName", "ruleContent"}` (no content for a
    whole-tool rule)."""
    match = _RULE.match(rule.strip())
    if match is None:  # pragma: no cover - the pattern matches any string
        return {"toolName": rule}
    value = {"toolName": match["tool"].strip()}
    if match["content"] is not None:
        value["ruleContent"] = match["content"]
    return value


def suggestions(suggested_rule: str | None) -> list[dict[str, Any]]:
    """What "yes, and don't ask again" would keep, in Claude Code's update shape."""
    if not suggested_rule:
        return []
    return [
        {"type": "addRules", "rules": [rule_value(suggested_rule)], "behavior": "allow",
         "destination": destination}
        for destination in ("session", "localSettings")
    ]


def request_body(request: ApprovalRequest) -> dict[str, Any]:
    """The `can_use_tool` request for one call, as Claude Code sends it."""
    decision = request.decision
    body: dict[str, Any] = {
        "tool_name": request.tool_name,
        "input": request.tool_input,
        "tool_use_id": request.tool_use_id,
        "permission_suggestions": suggestions(decision.suggested_rule),
        "blocked_path": None,
        "decision_reason": decision.reason,
    }
    if request.display.summary:
        body["description"] = request.display.summary
    return body


def keep_kind(updates: Any, suggested_rule: str | None) -> ApprovalKind:
    """How long an allow lasts: `once`, unless the client kept the suggested rule."""
    if not suggested_rule or not isinstance(updates, list):
        return "once"
    wanted = rule_value(suggested_rule)
    kind: ApprovalKind = "once"
    for raw in cast(list[Any], updates):
        if not isinstance(raw, dict):
            continue
        update = cast(dict[str, Any], raw)
        rules = update.get("rules")
        if (
            update.get("type") == "addRules"
            and update.get("behavior") == "allow"
            and isinstance(rules, list)
            and wanted in cast(list[Any], rules)
        ):
            found = DESTINATIONS.get(str(update.get("destination") or "session"), "once")
            if found == "save" or kind == "once":
                kind = found
    return kind


def mode_update(updates: Any) -> str | None:
    """The mode a `setMode` update asks for (the last one wins), if any."""
    mode: str | None = None
    if isinstance(updates, list):
        for raw in cast(list[Any], updates):
            if isinstance(raw, dict):
                update = cast(dict[str, Any], raw)
                if update.get("type") == "setMode" and isinstance(update.get("mode"), str):
                    mode = update["mode"]
    return mode


class ControlApprover:
    """The session's approval handler when a client program answers the prompts.

    `on_interrupt` runs when the client denies with `interrupt: true` (stop the turn, as
    Claude Code does); `on_mode` when an allow carries a `setMode` update.
    """

    def __init__(
        self,
        channel: ControlChannel,
        *,
        on_interrupt: Callable[[], None],
        on_mode: Callable[[str], None],
    ) -> None:
        self.channel = channel
        self.on_interrupt = on_interrupt
        self.on_mode = on_mode

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        try:
            answer = await self.channel.request("can_use_tool", request_body(request))
        except ControlError as e:
            return ApprovalDecision(
                "reject", f"Permission was not granted: the client did not answer ({e})."
            )
        return self.decision(request, answer)

    def decision(self, request: ApprovalRequest, answer: dict[str, Any]) -> ApprovalDecision:
        """The client's answer as an approval decision."""
        behavior = answer.get("behavior")
        if behavior == "allow":
            updated = answer.get("updatedInput")
            changed = (
                cast(dict[str, Any], updated)
                if isinstance(updated, dict) and updated != request.tool_input else None
            )
            updates = answer.get("updatedPermissions")
            mode = mode_update(updates)
            if mode is not None:
                self.on_mode(mode)
            # A changed input runs once the tool runner has checked it against the rules.
            return ApprovalDecision(keep_kind(updates, request.decision.suggested_rule),
                                    updated_input=changed)
        message = answer.get("message")
        feedback = (
            str(message) if isinstance(message, str) and message
            else "The user denied this tool call."
        )
        if behavior == "deny" and answer.get("interrupt") is True:
            self.on_interrupt()
        if behavior != "deny":
            feedback = f"Permission was not granted: the client answered {behavior!r}."
        return ApprovalDecision("reject", feedback)
