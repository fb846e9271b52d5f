"""Run the tool calls of one assistant message: validate, check permission, ask, execute.

Independent calls run concurrently; calls that write the same file, and all Bash calls
(which share one working directory), are serialised through locks. A Bash call may still
run beside a file tool's call, so a file tool is handed the very file its check judged
(`checked_path`) and writes that or nothing. Every call produces
exactly one tool_result, in the order the model asked, whatever happened to it (denied,
failed, skipped because the user steered, interrupted), so the history stays valid for
every provider.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aistack_tui.agent.events import (
    AgentEvent,
    Notice,
    PermissionAsked,
    PermissionDecided,
    ToolCallRequested,
    ToolFinished,
    ToolStarted,
)
from aistack_tui.agent.paging import page_result
from aistack_tui.agent.ports import ApprovalDecision, ApprovalHandler, ApprovalRequest
from aistack_tui.llm.json_repair import InvalidToolInput
from aistack_tui.llm.types import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from aistack_tui.permissions.guardrails import guard_untrusted_result
from aistack_tui.permissions.types import (
    APPROVED_GRANT,
    Decision,
    ExecGrant,
    PermissionChecker,
    PermissionDenial,
    PermissionRequest,
)
from aistack_tui.tools.base import (
    Tool,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolRegistry,
    checked_path,
    current_grant,
)
from aistack_tui.tools.editor import current_call_id

Emit = Callable[[AgentEvent], None]
PreToolHook = Callable[[str, dict[str, Any]], Awaitable["HookVerdict | None"]]
PostToolHook = Callable[[str, dict[str, Any], ToolResultBlock], Awaitable[str | None]]
NotificationHook = Callable[[str, str], Awaitable[None]]
"""(message, notification type): the user is about to be asked something."""
BeforeMutation = Callable[[str, str, dict[str, Any]], Awaitable[None]]
"""(tool_use_id, tool name, input): called before a call that may change files runs."""

SKIPPED_FOR_STEERING = (
    "Skipped: the user sent a new message before this call ran. Read it and decide "
    "whether the call is still needed."
)
INTERRUPTED = "Interrupted by the user."


@dataclass(frozen=True, slots=True)
class HookVerdict:
    """What a PreToolUse hook said: block (with a reason for the model) or a decision."""

    block_reason: str | None = None
    permission: str | None = None  # "allow" | "deny" | "ask"
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    """The input the call runs with instead of the model's (`updatedInput`)."""


@dataclass
class ToolRunner:
    tools: ToolRegistry
    permissions: PermissionChecker
    approver: ApprovalHandler
    context: ToolContext
    results_dir: Path
    pre_tool_hook: PreToolHook | None = None
    post_tool_hook: PostToolHook | None = None
    notification_hook: NotificationHook | None = None
    before_mutation: BeforeMutation | None = None
    """Checkpoints hang here: every non-read-only call (Bash included) passes it first."""
    denials: list[PermissionDenial] = field(default_factory=list[PermissionDenial])
    invalid_inputs: dict[str, InvalidToolInput] = field(
        default_factory=dict[str, InvalidToolInput]
    )
    """Calls whose JSON arguments the adapter could not repair, by tool_use id."""
    _bash_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _approval_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def run_all(
        self, calls: list[ToolUseBlock], emit: Emit, should_skip: Callable[[], bool]
    ) -> list[ToolResultBlock]:
        """Run `calls` concurrently; results come back in the calls' order.

        Cancelling the task that runs this (the user interrupted) cancels every call
        still running and returns results for all of them instead of raising, so the
        assistant's tool_use blocks are always answered.
        """
        for call in calls:
            tool = self.tools.get(call.name)
            display = _safe_describe(tool, call)
            emit(ToolCallRequested(call.id, call.name, call.input, display))
        started = time.perf_counter()
        tasks = [
            asyncio.create_task(self._run_one(call, emit, should_skip)) for call in calls
        ]
        try:
            return list(await asyncio.gather(*tasks))
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            out: list[ToolResultBlock] = []
            for call, res in zip(calls, results, strict=True):
                if isinstance(res, ToolResultBlock):
                    out.append(res)
                else:
                    block = ToolResultBlock(tool_use_id=call.id, content=INTERRUPTED, is_error=True)
                    emit(ToolFinished(call.id, call.name, block, time.perf_counter() - started))
                    out.append(block)
            return out

    async def _run_one(
        self, call: ToolUseBlock, emit: Emit, should_skip: Callable[[], bool]
    ) -> ToolResultBlock:
        started = time.perf_counter()
        display: ToolCallDisplay | None = None

        def finish(content: str | list[TextBlock | ImageBlock], is_error: bool) -> ToolResultBlock:
            if isinstance(content, str):
                content = page_result(content, results_dir=self.results_dir, tool_use_id=call.id)
            block = ToolResultBlock(tool_use_id=call.id, content=content, is_error=is_error)
            emit(ToolFinished(call.id, call.name, block, time.perf_counter() - started, display))
            return block

        prepared = await self._prepare(call)
        if isinstance(prepared, str):
            return finish(prepared, True)
        tool, args, call, verdict = prepared

        # Bash calls share one working directory, so each is checked, asked about and run
        # under one lock: the engine then judges the command from the directory it will
        # really run in (an earlier call's `cd` included).
        bash = tool.name == "Bash"
        async with self._bash_lock if bash else _NoLock():
            request = PermissionRequest(
                tool_name=call.name,
                tool_input=args.model_dump(by_alias=True, exclude_none=True),
                read_only=tool.read_only,
                needs_permission=tool.needs_permission,
                cwd=self.context.bash_cwd if bash else None,
                target=tool.permission_target(args),
            )
            decision = self.permissions.check(request)
            # The file this check judged: the tool writes it or nothing, whatever a hook
            # or the user then decides about the call (tools/file_target.py).
            checked_path.set(decision.path)
            if verdict is not None:
                decision = _with_hook_verdict(decision, verdict)

            if decision.behavior == "deny":
                return self._deny(call, decision.reason, emit, finish)
            grant = decision.grant or APPROVED_GRANT
            if decision.behavior == "ask":
                try:  # a call that fails anyway is not put to the user
                    await tool.validate(args, self.context)
                    display = await _preview(tool, args, self.context)
                except ToolError as e:
                    return finish(f"Error: {e}", True)
                if self.notification_hook is not None:
                    await self.notification_hook(
                        f"aistack needs your permission to use {call.name}", "permission_prompt"
                    )
                answer = await self._ask(call, decision, display, emit)
                approved = self._take_answer(answer, tool, call, args, decision, bash)
                if isinstance(approved, str):
                    return self._deny(call, approved, emit, finish)
                call, args, grant = approved
                emit(PermissionDecided(call.id, call.name, "allow", f"approved ({answer.kind})"))
            # This call runs in its own task, so the grant reaches only its own tool run.
            current_grant.set(grant)
            current_call_id.set(call.id)

            try:
                async with _NoLock() if bash else self._lock_for(tool, args):
                    # Checked after waiting for the lock: a call queued behind another is
                    # "not yet started" and a steering message skips it.
                    if should_skip():
                        return finish(SKIPPED_FOR_STEERING, True)
                    if self.before_mutation is not None and not tool.read_only:
                        await self.before_mutation(call.id, call.name, dict(call.input))
                    started = time.perf_counter()  # a card's time is the run, not the ask
                    emit(ToolStarted(call.id, call.name))
                    run_with_events = getattr(tool, "run_with_events", None)
                    if run_with_events is not None:  # Task: its child's events reach the UI
                        output = await run_with_events(args, self.context, emit, call.id)
                    else:
                        output = await tool.run(args, self.context)
            except ToolError as e:
                return finish(f"Error: {e}", True)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a tool bug must not kill the session: report it
                return finish(
                    f"Error: {call.name} failed unexpectedly: {type(e).__name__}: {e}", True
                )
        display = output.display or display
        block = finish(_guarded(call.name, output.content, emit), output.is_error)
        if self.post_tool_hook:
            note = await self.post_tool_hook(call.name, call.input, block)
            if note:
                block = ToolResultBlock(
                    tool_use_id=block.tool_use_id,
                    content=block.text() + f"\n\n[PostToolUse hook] {note}",
                    is_error=block.is_error,
                )
        return block

    async def _prepare(
        self, call: ToolUseBlock
    ) -> tuple[Tool[Any], Any, ToolUseBlock, HookVerdict | None] | str:
        """The tool, its parsed arguments, the call as PreToolUse hooks left it and their
        verdict; or the error the model is told instead of running the call."""
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools.offered_names()))
            return f"Error: no tool named {call.name!r}. Available tools: {known}"
        invalid = self.invalid_inputs.pop(call.id, None)
        if invalid is not None:
            raw = invalid["raw"][:2000]
            return (
                "Error: the arguments of this call were not valid JSON, so it was not run. "
                f"Send the call again with valid JSON arguments. Raw arguments: {raw}"
            )
        try:
            args = tool.parse_args(call.input)
        except ToolError as e:
            return f"Error: {e}"
        current_call_id.set(call.id)  # hooks name the call they are asked about
        verdict = await self.pre_tool_hook(call.name, call.input) if self.pre_tool_hook else None
        if verdict and verdict.block_reason is not None:
            return f"Blocked by a PreToolUse hook: {verdict.block_reason}"
        if verdict and verdict.updated_input is not None:
            # A hook rewrote the call: that input is what is checked, asked about and run.
            call = call.model_copy(update={"input": verdict.updated_input})
            try:
                args = tool.parse_args(call.input)
            except ToolError as e:
                return f"Error: the input a PreToolUse hook gave is invalid: {e}"
        return tool, args, call, verdict

    def _take_answer(
        self,
        answer: ApprovalDecision,
        tool: Tool[Any],
        call: ToolUseBlock,
        args: Any,
        decision: Decision,
        bash: bool,
    ) -> tuple[ToolUseBlock, Any, ExecGrant] | str:
        """What the user's answer to an ask allows: the call (as the user edited it), its
        arguments and grant, with "don't ask again" and "save" applied; or why it is
        denied."""
        if not answer.approved:
            reason = "The user denied this tool call."
            if answer.feedback:
                reason += f" The user said: {answer.feedback}"
            return reason
        if answer.kind in ("session", "save") and decision.suggested_rule:
            self.permissions.grant_session(decision.suggested_rule)
            if answer.kind == "save":
                self.permissions.save_rule(decision.suggested_rule)
        if answer.updated_input is not None and answer.updated_input != call.input:
            changed = self._changed_input(tool, call, answer.updated_input, bash)
            if isinstance(changed, str):
                return changed
            call, args, decision = changed
        return call, args, decision.grant.approved() if decision.grant else APPROVED_GRANT

    def _changed_input(
        self, tool: Tool[Any], call: ToolUseBlock, new_input: dict[str, Any], bash: bool
    ) -> tuple[ToolUseBlock, Any, Decision] | str:
        """The call with the input its approver wrote, checked against the rules again:
        the approval covers the input the approver chose, never one a rule denies. The
        reason it is refused otherwise."""
        try:
            args = tool.parse_args(new_input)
        except ToolError as e:
            return f"The approved input is invalid: {e}"
        decision = self.permissions.check(PermissionRequest(
            tool_name=call.name,
            tool_input=args.model_dump(by_alias=True, exclude_none=True),
            read_only=tool.read_only,
            needs_permission=tool.needs_permission,
            cwd=self.context.bash_cwd if bash else None,
            target=tool.permission_target(args),
        ))
        if decision.behavior == "deny":
            return f"The approved input is denied: {decision.reason}"
        checked_path.set(decision.path)  # the file the new input names, and no other
        return call.model_copy(update={"input": dict(new_input)}), args, decision

    def _deny(
        self,
        call: ToolUseBlock,
        reason: str,
        emit: Emit,
        finish: Callable[[str, bool], ToolResultBlock],
    ) -> ToolResultBlock:
        self.denials.append(PermissionDenial(call.name, call.id, dict(call.input), reason))
        emit(PermissionDecided(call.id, call.name, "deny", reason, dict(call.input)))
        return finish(f"Permission denied: {reason}", True)

    async def _ask(
        self, call: ToolUseBlock, decision: Decision, display: ToolCallDisplay, emit: Emit
    ) -> ApprovalDecision:
        # One dialog at a time: parallel calls that all ask queue one after another.
        async with self._approval_lock:
            emit(PermissionAsked(call.id, call.name, decision))
            return await self.approver.decide(
                ApprovalRequest(call.id, call.name, dict(call.input), decision, display)
            )

    def _lock_for(self, tool: Tool[Any], args: Any) -> asyncio.Lock | _NoLock:
        if tool.read_only:
            return _NoLock()
        target = tool.path_argument(args)
        if not target:
            return _NoLock()
        try:
            key = self.context.resolve(target)
        except OSError:  # the path is changing right now (realpath raced a symlink swap)
            key = Path(target)
        return self.context.lock_for(key)


def _untrusted(tool_name: str) -> bool:
    """Results written by third parties: masked and checked for prompt injection."""
    return tool_name == "WebFetch" or tool_name.startswith("mcp__")


def _with_hook_verdict(decision: Decision, verdict: HookVerdict) -> Decision:
    """The engine's decision as a PreToolUse hook's verdict changes it: a hook may deny
    or ask where the engine allowed, and skip the prompt a mode would show, never an
    explicit ask rule."""
    if verdict.permission == "deny" and decision.behavior != "deny":
        return Decision("deny", f"denied by a PreToolUse hook: {verdict.reason}")
    if verdict.permission == "ask" and decision.behavior == "allow":
        return Decision("ask", f"a PreToolUse hook asks: {verdict.reason}")
    if verdict.permission == "allow" and decision.behavior == "ask" and decision.rule is None:
        return Decision("allow", f"allowed by a PreToolUse hook: {verdict.reason}")
    return decision


def _guarded(
    name: str, content: str | list[TextBlock | ImageBlock], emit: Emit
) -> str | list[TextBlock | ImageBlock]:
    """A result from outside (the web, MCP servers) with prompt injections flagged."""
    if not (_untrusted(name) and isinstance(content, str)):
        return content
    guarded, flags = guard_untrusted_result(content)
    if flags:
        emit(Notice(f"{name} result may contain a prompt injection: " + "; ".join(flags),
                    "warning"))
    return guarded


class _NoLock:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


def _safe_describe(tool: Tool[Any] | None, call: ToolUseBlock) -> ToolCallDisplay:
    if tool is None:
        return ToolCallDisplay(summary=call.name)
    try:
        return tool.describe(tool.parse_args(call.input))
    except Exception:
        return ToolCallDisplay(summary=call.name)


async def _preview(tool: Tool[Any], args: Any, ctx: ToolContext) -> ToolCallDisplay:
    """An edit's exact diff for the confirm dialog; other tools' one-line summary. Raises
    ToolError when the change cannot be made (the file was not read, `old_string` is
    not in it)."""
    preview = getattr(tool, "preview", None)
    if preview is not None:
        return await preview(args, ctx)
    return tool.describe(args)
