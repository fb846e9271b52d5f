"""Settings hooks: shell commands run at lifecycle events, in Claude Code's shape.

`hooks: {EVENT: [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...",
"timeout": 60}]}]}` for PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop,
Notification, PreCompact, SessionStart and SessionEnd. The event arrives as JSON on stdin
with Claude Code's common fields (`session_id`, `transcript_path`, `cwd`,
`permission_mode`, `hook_event_name`) and the event's own. Exit 0 goes on (stdout JSON
may decide); exit 2 blocks and its stderr goes to the model; any other code is a
non-blocking error shown to the user. A hook's `allow` skips a prompt but never overrides
a deny or ask rule (the tool runner enforces that).

Hooks may also be callbacks in the program driving the session (the Agent SDK's `hooks=`
option, over the control protocol): `join` adds their groups beside the settings' own,
and a callback's answer is read exactly as a command's stdout JSON is, with Claude Code's
decision fields: `permissionDecision` allow/deny/ask, `updatedInput` (PreToolUse runs the
call with it), `additionalContext` (given to the model), `decision: "block"` with a
`reason`, `systemMessage` (shown to the user) and `continue: false` (the turn stops after
the hook; `stopReason` says why).

The matcher selects what Claude Code selects by: the tool name for PreToolUse and
PostToolUse, the source for SessionStart (`startup`, `resume`, `clear`, `compact`), the
trigger for PreCompact (`manual`, `auto`), the notification type for Notification and the
reason for SessionEnd; UserPromptSubmit, Stop and SubagentStop run every group. A matcher
is matched as Claude Code matches it: empty or `*` matches everything, a plain name (or
names joined by `|`) matches exactly, anything else is a regular expression searched in
the value.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from aistack_tui.agent.tool_runner import HookVerdict
from aistack_tui.json_values import as_list, as_object
from aistack_tui.llm.types import Message, ToolResultBlock
from aistack_tui.tools.editor import current_call_id
from aistack_tui.tools.process import kill_tree, start_group

HOOK_EVENTS = (
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "Notification",
    "PreCompact", "SessionStart", "SessionEnd",
)
UNMATCHED_EVENTS = frozenset({"UserPromptSubmit", "Stop", "SubagentStop"})
"""Events without a matcher: every group runs (a matcher written there is ignored)."""
_PLAIN_MATCHER = re.compile(r"^[A-Za-z0-9_|\s-]+$")
DEFAULT_TIMEOUT = 60.0
BLOCK_EXIT = 2


class HookConfigError(ValueError):
    """A malformed `hooks` setting (fatal like every security-relevant setting)."""


@dataclass(frozen=True, slots=True)
class HookCommand:
    command: str
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True, slots=True)
class HookCallback:
    """A hook the client program runs (an Agent SDK callback), named by its id."""

    callback_id: str
    timeout: float = DEFAULT_TIMEOUT
    blocks_on_failure: bool = False
    """The SDK's `on_failure="block"`: a callback that fails blocks the action."""


CallbackCaller = Callable[[str, dict[str, Any], "str | None"], Awaitable[dict[str, Any]]]
"""(callback id, hook input, tool_use_id) → the callback's output, Claude Code's hook
JSON; raises when the client could not run it."""


@dataclass(frozen=True, slots=True)
class HookGroup:
    matcher: str
    commands: tuple[HookCommand | HookCallback, ...]

    def matches(self, value: str | None) -> bool:
        """Whether the group runs for `value` (None: an event without a matcher)."""
        return value is None or matcher_matches(self.matcher, value)


def matcher_matches(matcher: str, value: str) -> bool:
    """Claude Code's matching: empty or `*` is everything; a plain name or `A|B` list
    matches exactly; anything else is a regular expression searched in `value` (an
    invalid one matches nothing)."""
    matcher = matcher.strip()
    if matcher in ("", "*"):
        return True
    if _PLAIN_MATCHER.match(matcher):
        return value in {part.strip() for part in matcher.split("|")}
    try:
        return re.search(matcher, value) is not None
    except re.error:
        return False


@dataclass(frozen=True, slots=True)
class HookResult:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False

    def json(self) -> dict[str, object]:
        """The hook's stdout as a JSON object; {} when it printed anything else."""
        text = self.stdout.strip()
        if not text.startswith("{"):
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            return {}
        return as_object(data) or {}


def parse_hooks(raw: dict[str, Any], source: str = "settings") -> dict[str, list[HookGroup]]:
    """Validate the `hooks` setting; raises HookConfigError naming the bad entry."""
    out: dict[str, list[HookGroup]] = {}
    for event, value in raw.items():
        if event not in HOOK_EVENTS:
            raise HookConfigError(
                f"{source}: unknown hook event {event!r} (known: {', '.join(HOOK_EVENTS)})"
            )
        groups = as_list(value)
        if groups is None:
            raise HookConfigError(f"{source}: hooks.{event} must be a list")
        parsed: list[HookGroup] = []
        for i, entry in enumerate(groups):
            where = f"{source}: hooks.{event}[{i}]"
            group = as_object(entry)
            hooks = as_list(group.get("hooks", [])) if group is not None else None
            if group is None or hooks is None:
                raise HookConfigError(f"{where} must be {{'matcher': ..., 'hooks': [...]}}")
            commands: list[HookCommand] = []
            for j, item in enumerate(hooks):
                hook = as_object(item)
                command = hook.get("command") if hook is not None else None
                if hook is None or hook.get("type", "command") != "command" or (
                    not isinstance(command, str)
                ):
                    raise HookConfigError(f"{where}.hooks[{j}] needs type 'command' and a command")
                timeout = hook.get("timeout", DEFAULT_TIMEOUT)
                if not isinstance(timeout, int | float) or timeout <= 0:
                    raise HookConfigError(f"{where}.hooks[{j}].timeout must be a positive number")
                commands.append(HookCommand(command, float(timeout)))
            parsed.append(HookGroup(str(group.get("matcher", "")), tuple(commands)))
        out[event] = parsed
    return out


def parse_callback_hooks(raw: Any) -> dict[str, list[HookGroup]]:
    """A client program's hooks as it registers them (the Agent SDK's `initialize`:
    `{"PreToolUse": [{"matcher": "Edit", "hookCallbackIds": ["hook_0"], "timeout": 60,
    "onFailure": "block"}]}`) as hook groups of callbacks; HookConfigError naming what
    cannot run.

    An event aistack has no point for (`PermissionRequest`, `PostToolUseFailure`,
    `SubagentStart`) is refused rather than dropped: a program may rely on its hook as a
    guard, and must not get a session that quietly runs without it.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise HookConfigError("hooks must be an object of events")
    out: dict[str, list[HookGroup]] = {}
    for event, matchers in cast(dict[str, Any], raw).items():
        if event not in HOOK_EVENTS:
            raise HookConfigError(
                f"aistack does not run {event} hooks (it runs {', '.join(HOOK_EVENTS)})"
            )
        entries = as_list(matchers)
        if entries is None:
            raise HookConfigError(f"hooks.{event} must be a list")
        out[event] = [_callback_group(event, entry) for entry in entries]
    return out


def _callback_group(event: str, raw: Any) -> HookGroup:
    entry = as_object(raw)
    if entry is None:
        raise HookConfigError(f"each of hooks.{event} must be an object")
    ids = as_list(entry.get("hookCallbackIds"))
    if ids is None or not all(isinstance(i, str) for i in ids):
        raise HookConfigError(f"hooks.{event} needs hookCallbackIds (strings)")
    timeout = entry.get("timeout")
    seconds = (
        float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT
    )
    # Claude Code reads any onFailure but "continue" as "block" (the SDK says so).
    blocks = entry.get("onFailure") not in (None, "continue")
    matcher = entry.get("matcher")
    return HookGroup(
        matcher if isinstance(matcher, str) else "",
        tuple(HookCallback(str(i), seconds, blocks) for i in ids),
    )


class HookRunner:
    """Runs the configured hooks for one session."""

    def __init__(
        self,
        hooks: dict[str, list[HookGroup]],
        *,
        session_id: str,
        cwd: Path,
        project_root: Path,
        notify: Callable[[str], None] | None = None,
        env: Mapping[str, str] | None = None,
        transcript_path: Path | None = None,
        messages: Callable[[], Sequence[Message]] = tuple,
        permission_mode: Callable[[], str] = lambda: "default",
    ) -> None:
        self.hooks = hooks
        self.session_id = session_id
        self.cwd = cwd
        self.project_root = project_root
        self.notify: Callable[[str], None] = notify or (lambda _text: None)
        self.env = dict(env or {})
        """Variables the settings' `env` adds to every hook's environment."""
        self.transcript_path = transcript_path
        """Where the conversation is written as JSONL before a hook runs (Claude Code's
        `transcript_path`); None: the field is an empty string."""
        self.messages = messages
        """The conversation so far, asked each time a hook runs."""
        self.permission_mode = permission_mode
        self.call_back: CallbackCaller | None = None
        """How `HookCallback`s reach the client (set by `join`)."""
        self.halted: str | None = None
        """Why a hook answered `continue: false` during this run (the loop then ends the
        turn, reason `stop_hook`); cleared by the loop when a run starts."""

    def has(self, event: str) -> bool:
        return bool(self.hooks.get(event))

    def active(self) -> bool:
        """Whether any hook is configured or joined: a runner without any acts as none."""
        return any(self.hooks.values())

    def join(self, hooks: Mapping[str, Sequence[HookGroup]], call_back: CallbackCaller) -> None:
        """Add a client's hook groups (callbacks) after the settings' own; they run at
        the same points and are read the same way."""
        self.call_back = call_back
        for event, groups in hooks.items():
            self.hooks.setdefault(event, []).extend(groups)

    async def _run(
        self, event: str, payload: dict[str, Any], match: str | None
    ) -> list[HookResult]:
        groups = [g for g in self.hooks.get(event, [])
                  if g.matches(None if event in UNMATCHED_EVENTS else match)]
        if not groups:
            return []
        body = {
            "session_id": self.session_id,
            "transcript_path": self._write_transcript(),
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode(),
            "hook_event_name": event,
            **payload,
        }
        data = json.dumps(body).encode()
        results: list[HookResult] = []
        for group in groups:
            for command in group.commands:
                if isinstance(command, HookCallback):
                    result = await self._callback(command, body)
                    name = f"callback {command.callback_id}"
                else:
                    result = await self._exec(command, data)
                    name = f"`{command.command}`"
                if result.exit_code not in (0, BLOCK_EXIT):
                    detail = (result.stderr or result.stdout).strip()[:500]
                    why = "timed out" if result.timed_out else f"exited {result.exit_code}"
                    self.notify(f"{event} hook {name} {why}: {detail}")
                self._read_common(event, result)
                results.append(result)
        return results

    def _read_common(self, event: str, result: HookResult) -> None:
        """The fields every event shares: `systemMessage` for the user, `continue:
        false` to stop after this hook."""
        data = result.json()
        message = data.get("systemMessage")
        if isinstance(message, str) and message.strip():
            self.notify(f"{event} hook: {message.strip()}")
        if data.get("continue") is False and self.halted is None:
            reason = data.get("stopReason")
            self.halted = (
                str(reason) if isinstance(reason, str) and reason
                else f"a {event} hook stopped the turn"
            )

    async def _callback(self, hook: HookCallback, body: dict[str, Any]) -> HookResult:
        """Run a client's callback; its output reads like a command's stdout JSON."""
        failure = BLOCK_EXIT if hook.blocks_on_failure else 1
        if self.call_back is None:
            return HookResult(failure, "", "no client is connected to run this hook")
        tool_use_id = current_call_id.get() if "tool_name" in body else None
        try:
            output = await asyncio.wait_for(
                self.call_back(hook.callback_id, body, tool_use_id), hook.timeout
            )
        except TimeoutError:
            return HookResult(failure, "", f"timed out after {hook.timeout:g}s",
                              timed_out=True)
        except Exception as e:  # the client's failure, whatever it was, is reported
            return HookResult(failure, "", f"the hook callback failed: {e}")
        return HookResult(0, json.dumps(output), "")

    def _write_transcript(self) -> str:
        """The conversation as JSONL (one `{"type", "message"}` line per message), written
        where `transcript_path` says; '' when there is nowhere to write it."""
        path = self.transcript_path
        if path is None:
            return ""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = [
                json.dumps({"type": m.role, "session_id": self.session_id,
                            "message": json.loads(m.model_dump_json())})
                for m in self.messages()
            ]
            path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        except OSError:
            return ""
        return str(path)

    async def _exec(self, command: HookCommand, stdin: bytes) -> HookResult:
        env = {**os.environ, **self.env, "AISTACK_PROJECT_DIR": str(self.project_root),
               "CLAUDE_PROJECT_DIR": str(self.project_root)}
        proc = await start_group(asyncio.create_subprocess_exec(
            "bash", "-c", command.command,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=self.cwd, env=env, start_new_session=True,
        ), grace=0)
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), command.timeout)
        except (TimeoutError, asyncio.CancelledError) as e:
            kill_tree(proc.pid)
            await proc.wait()
            if isinstance(e, asyncio.CancelledError):
                raise
            return HookResult(-1, "", f"timed out after {command.timeout:g}s", timed_out=True)
        return HookResult(proc.returncode or 0, out.decode(errors="replace"),
                          err.decode(errors="replace"))

    async def pre_tool_use(self, tool_name: str, tool_input: dict[str, Any]) -> HookVerdict | None:
        if self.halted is not None:  # a hook stopped the turn: no further call runs
            return HookVerdict(block_reason=f"a hook stopped the turn: {self.halted}")
        if not self.has("PreToolUse"):
            return None
        results = await self._run(
            "PreToolUse", {"tool_name": tool_name, "tool_input": tool_input}, tool_name
        )
        verdict: HookVerdict | None = None
        for result in results:
            if result.exit_code == BLOCK_EXIT:
                return HookVerdict(block_reason=result.stderr.strip() or "blocked by hook")
            data = result.json()
            if data.get("decision") == "block":
                return HookVerdict(block_reason=str(data.get("reason", "blocked by hook")))
            specific = as_object(data.get("hookSpecificOutput")) or {}
            decision = specific.get("permissionDecision")
            reason = str(specific.get("permissionDecisionReason", ""))
            if decision is None and data.get("decision") == "approve":
                # Claude Code's older spelling of a PreToolUse allow.
                decision, reason = "allow", str(data.get("reason", ""))
            if decision in ("allow", "deny", "ask"):
                # The strictest decision of all hooks wins.
                rank = {"allow": 0, "ask": 1, "deny": 2}
                if verdict is None or rank[decision] > rank[verdict.permission or "allow"]:
                    verdict = replace(verdict or HookVerdict(), permission=decision,
                                      reason=reason)
            updated = as_object(specific.get("updatedInput"))
            if updated is not None:
                # The call runs with the hook's input (the last hook to change it wins);
                # the permission check then judges that input.
                verdict = replace(verdict or HookVerdict(), updated_input=dict(updated))
        if self.halted is not None:
            return HookVerdict(block_reason=f"a hook stopped the turn: {self.halted}")
        return verdict

    async def post_tool_use(
        self, tool_name: str, tool_input: dict[str, Any], result: ToolResultBlock
    ) -> str | None:
        if not self.has("PostToolUse"):
            return None
        response = {"content": result.text(), "is_error": result.is_error}
        results = await self._run(
            "PostToolUse",
            {"tool_name": tool_name, "tool_input": tool_input, "tool_response": response},
            tool_name,
        )
        notes: list[str] = []
        for r in results:
            data = r.json()
            if r.exit_code == BLOCK_EXIT and r.stderr.strip():
                notes.append(r.stderr.strip())
            elif data.get("decision") == "block":
                notes.append(str(data.get("reason", "")))
            added = (as_object(data.get("hookSpecificOutput")) or {}).get("additionalContext")
            if isinstance(added, str) and added.strip():
                notes.append(added.strip())
        return "\n".join(n for n in notes if n) or None

    async def user_prompt_submit(self, prompt: str) -> tuple[str | None, str]:
        """(block reason or None, extra context to add to the prompt)."""
        if not self.has("UserPromptSubmit"):
            return None, ""
        results = await self._run("UserPromptSubmit", {"prompt": prompt}, None)
        if self.halted is not None:
            return self.halted, ""
        extra: list[str] = []
        for r in results:
            if r.exit_code == BLOCK_EXIT:
                return r.stderr.strip() or "blocked by a UserPromptSubmit hook", ""
            data = r.json()
            if data.get("decision") == "block":
                return str(data.get("reason", "blocked by a UserPromptSubmit hook")), ""
            specific = as_object(data.get("hookSpecificOutput")) or {}
            added = specific.get("additionalContext")
            if isinstance(added, str) and added.strip():
                extra.append(added.strip())
            elif r.exit_code == 0 and r.stdout.strip() and not data:
                extra.append(r.stdout.strip())
        return None, "\n".join(extra)

    async def stop(self, stop_hook_active: bool) -> str | None:
        """A reason to keep going (fed to the model), or None to stop."""
        if not self.has("Stop"):
            return None
        results = await self._run("Stop", {"stop_hook_active": stop_hook_active}, None)
        if self.halted is not None:
            return None  # `continue: false` stops, whatever a decision said
        for r in results:
            if r.exit_code == BLOCK_EXIT:
                return r.stderr.strip() or "a Stop hook asked to continue"
            data = r.json()
            if data.get("decision") == "block":
                return str(data.get("reason", "a Stop hook asked to continue"))
        return None

    async def subagent_stop(self, stop_hook_active: bool = False) -> str | None:
        """A SubagentStop hook's reason for the subagent to go on, or None."""
        if not self.has("SubagentStop"):
            return None
        results = await self._run("SubagentStop", {"stop_hook_active": stop_hook_active}, None)
        for r in results:
            if r.exit_code == BLOCK_EXIT:
                return r.stderr.strip() or "a SubagentStop hook asked to continue"
            data = r.json()
            if data.get("decision") == "block":
                return str(data.get("reason", "a SubagentStop hook asked to continue"))
        return None

    async def notification(self, message: str, kind: str) -> None:
        """Tell Notification hooks what the user is being asked (`permission_prompt`,
        `idle_prompt`); their output is not used."""
        if self.has("Notification"):
            await self._run("Notification",
                            {"message": message, "notification_type": kind}, kind)

    async def pre_compact(self, trigger: str, instructions: str = "") -> None:
        """Before a compaction (`manual` for /compact, `auto` at the threshold)."""
        if self.has("PreCompact"):
            await self._run("PreCompact",
                            {"trigger": trigger, "custom_instructions": instructions}, trigger)

    async def session_end(self, reason: str) -> None:
        """When the session ends (`clear`, `logout`, `prompt_input_exit`, `other`)."""
        if self.has("SessionEnd"):
            await self._run("SessionEnd", {"reason": reason}, reason)

    async def session_start(self, source: str) -> str:
        """The text SessionStart hooks for `source` print, for the model's context."""
        if not self.has("SessionStart"):
            return ""
        results = await self._run("SessionStart", {"source": source}, source)
        texts: list[str] = []
        for r in results:
            if r.exit_code != 0:
                continue
            data = r.json()
            specific = as_object(data.get("hookSpecificOutput")) or {}
            extra = specific.get("additionalContext")
            if isinstance(extra, str) and extra.strip():
                texts.append(extra.strip())
            elif not data and r.stdout.strip():
                texts.append(r.stdout.strip())
        return "\n".join(texts)
