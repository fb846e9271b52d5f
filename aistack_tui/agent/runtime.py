"""The turn loop: stream a model response, run its tool calls, repeat until it answers.

`Agent.run()` is an async iterator of `AgentEvent`s and nothing else: the TUI and print
mode are two consumers of the same stream. The stream and the tool calls run in child
tasks that feed one queue, so an interrupt can cancel them at any await point while the
loop itself stays in charge of keeping the history valid (partial text kept, every
tool_use answered) and of telling its listeners (persistence, checkpoints, memory)
about each completed message and turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from aistack_tui.agent import events as ev
from aistack_tui.agent.compacting import compact_history, compaction_notices
from aistack_tui.agent.compaction import (
    CompactionResult,
    CompactionSettings,
)
from aistack_tui.agent.history import repair_history
from aistack_tui.agent.loop_signals import (
    DONE,
    INTERRUPTED,
    BreakerTrippedError,
    GoesOn,
    PromptBlockedError,
    ToolFailures,
    ToolResults,
)
from aistack_tui.agent.notices import Notices
from aistack_tui.agent.ports import LifecycleHooks
from aistack_tui.agent.queues import MessageQueues
from aistack_tui.agent.stops import (
    LimitReachedError,
    RunLimits,
    check_hard_limits,
    check_tool_failures,
)
from aistack_tui.agent.tool_runner import ToolRunner
from aistack_tui.agent.usage import UsageTotals as UsageTotals
from aistack_tui.agent.usage import cost_since
from aistack_tui.llm import types as lt
from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.json_repair import INVALID_TOOL_INPUT, InvalidToolInput
from aistack_tui.llm.model_info import ModelInfo, cost_usd
from aistack_tui.llm.provider import Provider
from aistack_tui.llm.retry import RetryPolicy, stream_with_retry
from aistack_tui.llm.tokens import estimate_request_tokens, estimate_tokens

if TYPE_CHECKING:
    from aistack_tui.agent.hooks import HookRunner

ContextInjector = Callable[[list[lt.Message]], Awaitable[str]]
"""Returns text (memory, code knowledge) to show the model before this turn."""

MAX_STOP_HOOK_CONTINUATIONS = 5


class Agent:
    """One conversation with one model at a time (the model can be switched between runs)."""

    def __init__(
        self,
        *,
        provider: Provider,
        model_info: ModelInfo,
        runner: ToolRunner,
        system_prompt: str,
        history: list[lt.Message] | None = None,
        listeners: Sequence[LifecycleHooks] = (),
        retry_policy: RetryPolicy | None = None,
        max_turns: int | None = None,
        context_injector: ContextInjector | None = None,
        max_output_tokens: int | None = None,
        hook_runner: HookRunner | None = None,
        compaction: CompactionSettings | None = None,
        on_compacted: Callable[[str], Awaitable[None]] | None = None,
        limits: RunLimits | None = None,
        fallback: Callable[[], tuple[Provider, ModelInfo]] | None = None,
        breaker_threshold: int = 5,
        route_for: Callable[[str], tuple[Provider, ModelInfo] | None] | None = None,
        notices: Notices | None = None,
    ) -> None:
        self.provider = provider
        self.model_info = model_info
        self.runner = runner
        self.system_prompt = system_prompt
        self.messages: list[lt.Message] = list(history or [])
        self.listeners: tuple[LifecycleHooks, ...] = tuple(listeners)
        """Told of every completed message, turn and provider error, in this order."""
        self.retry_policy = retry_policy or RetryPolicy()
        self.max_turns = max_turns
        self.context_injector = context_injector
        self.max_output_tokens = max_output_tokens
        self.hook_runner = hook_runner
        self.compaction = compaction or CompactionSettings()
        self.on_compacted = on_compacted
        self.warned_context = False
        self.limits = limits or RunLimits()
        self.fallback = fallback
        self.breaker_threshold = breaker_threshold
        self.route_for: Callable[[str], tuple[Provider, ModelInfo] | None] = route_for or (
            lambda _kind: None
        )
        self._consecutive_failures = 0
        self._stop_continuations = 0
        """Times Stop hooks sent the model back to work in this run."""
        self.notices = notices or Notices()
        self._model_notes: list[str] = []
        self.queues = MessageQueues()
        self.totals = UsageTotals()
        self.last_context_tokens = 0
        self.last_injected_context = ""
        self._interrupt = asyncio.Event()
        self._active_queue: asyncio.Queue[Any] | None = None
        self._running = False

    # --- control from the host ---------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    def interrupt(self) -> None:
        """Stop the current stream or tool calls; the partial answer is kept."""
        self._interrupt.set()
        if self._active_queue is not None:
            self._active_queue.put_nowait(INTERRUPTED)

    def steer(self, text: str) -> None:
        """Deliver `text` at the next opportunity, skipping tool calls not yet started."""
        self.queues.steer(text)

    def follow_up(self, text: str) -> None:
        """Deliver `text` after the model's current answer is finished."""
        self.queues.follow_up(text)

    def notify(self, text: str, level: str = "warning") -> None:
        """Queue a notice for the user (shown at the next step of the loop)."""
        self.notices.notify(text, level)

    def add_model_note(self, text: str) -> None:
        """Something the model should read with the next prompt (an undo, a shell
        command's output). It goes into that user message as its own block after the
        prompt; front ends recognise the `<user-...>` tag and do not show it."""
        self._model_notes.append(text)

    def clear_model_notes(self) -> None:
        """Drop notes meant for a conversation that has been left (`/clear`, resume)."""
        self._model_notes = []

    def take_notices(self) -> list[ev.Notice]:
        """Notices not yet shown (the loop yields them; a host may take them early)."""
        return self.notices.take()

    def switch_model(self, provider: Provider, model_info: ModelInfo) -> None:
        """Use another model from the next request on; the history replays to it."""
        self.provider = provider
        self.model_info = model_info

    # --- the loop ----------------------------------------------------------------------

    async def run(
        self, prompt: str | list[lt.ContentBlock]
    ) -> AsyncGenerator[ev.AgentEvent, None]:
        """Add the user's prompt and loop until the model answers without tool calls."""
        if self._running:
            raise RuntimeError("Agent.run() is already running; use steer() or follow_up()")
        self._running = True
        self._interrupt.clear()
        started = time.monotonic()
        api_ms_before = self.totals.api_ms
        usage_before = self.totals.usage
        cost_before = self.totals.cost_usd
        turns = 0
        reason: ev.EndReason = "completed"
        final_text = ""
        detail = ""
        try:
            async for event in self._submit(prompt):
                yield event
            self._stop_continuations = 0
            tool_failures = 0
            while True:
                if self.max_turns is not None and turns >= self.max_turns:
                    reason = "max_turns"
                    break
                check_hard_limits(
                    self.limits,
                    usage=self.totals.usage - usage_before,
                    cost_usd=cost_since(self.totals.cost_usd, cost_before),
                    started=started,
                )
                turns += 1
                yield ev.TurnStarted(turns, self.provider.name, self.provider.model)
                assistant: lt.Message | None = None
                async for item in self._stream_turn():
                    if isinstance(item, lt.Message):
                        assistant = item
                    else:
                        yield item
                if assistant is None:  # interrupted mid-stream
                    reason = "interrupted"
                    break
                final_text = assistant.text() or final_text
                calls = assistant.tool_uses()
                if not calls:
                    goes_on = False
                    async for item in self._after_answer(turns):
                        if isinstance(item, GoesOn):
                            goes_on = True
                        else:
                            yield item
                    if goes_on:
                        continue
                    break
                async for item in self._answer_calls(calls):
                    if isinstance(item, ToolFailures):
                        tool_failures = tool_failures + item.count if item.count else 0
                    else:
                        yield item
                await self._tell_turn_end(turns)
                if self._interrupt.is_set():
                    reason = "interrupted"
                    break
                if self.hook_runner is not None and self.hook_runner.halted is not None:
                    # A hook answered `continue: false`: the turn ends here, saying why.
                    reason, detail = "stop_hook", self.hook_runner.halted
                    yield ev.Notice(f"Stopped by a hook: {detail}", "warning")
                    break
                check_tool_failures(self.limits, tool_failures)
        except PromptBlockedError:
            reason = "stop_hook"
        except LimitReachedError as e:
            reason = e.reason  # type: ignore[assignment]
            detail = e.detail
            yield ev.Notice(e.detail, "warning")
        except ProviderError as e:
            reason = "error"
            await self._tell_error(e)
            yield ev.ErrorOccurred(str(e), type(e).__name__, e.retryable, e.provider,
                                   e.status_code)
        finally:
            self._running = False
        cost = cost_since(self.totals.cost_usd, cost_before)
        yield ev.TurnEnded(
            detail=detail,
            reason=reason,
            num_turns=turns,
            final_text=final_text,
            usage=self.totals.usage - usage_before,
            cost_usd=cost,
            duration_ms=int((time.monotonic() - started) * 1000),
            duration_api_ms=self.totals.api_ms - api_ms_before,
        )

    async def _after_answer(self, turns: int) -> AsyncIterator[ev.AgentEvent | GoesOn]:
        """The model answered without tool calls: a Stop hook may send it back to work,
        and follow-ups (or steering that came too late) become the next prompt. Yields
        `GoesOn` last when the loop goes on."""
        await self._tell_turn_end(turns)
        hooks = self.hook_runner
        if (
            hooks is not None
            and hooks.active()
            and self._stop_continuations < MAX_STOP_HOOK_CONTINUATIONS
        ):
            keep_going = await hooks.stop(self._stop_continuations > 0)
            for notice in self.take_notices():
                yield notice
            if keep_going:
                self._stop_continuations += 1
                async for event in self._add(lt.Message.user(f"[Stop hook] {keep_going}")):
                    yield event
                yield GoesOn()
                return
        follow = self.queues.take_follow_ups() or self.queues.take_steering()
        if follow:
            async for event in self._add(lt.Message.user("\n\n".join(follow))):
                yield event
            yield GoesOn()

    async def _answer_calls(
        self, calls: list[lt.ToolUseBlock]
    ) -> AsyncIterator[ev.AgentEvent | ToolFailures]:
        """Run the model's calls and add their results, with steering that arrived, as
        the next user message. Yields last how many calls failed on their own when every
        call failed (denied calls are the engine working, not the tools failing), else 0."""
        results = None
        denials_before = len(self.runner.denials)
        async for item in self._run_tools(calls):
            if isinstance(item, ToolResults):
                results = item.blocks
            else:
                yield item
        for notice in self.take_notices():
            yield notice
        denied = len(self.runner.denials) - denials_before
        failed = 0
        if results and all(r.is_error for r in results) and denied < len(results):
            failed = len(results) - denied
        blocks: list[lt.ContentBlock] = list(results or [])
        steering = self.queues.take_steering()
        if steering:
            blocks.append(lt.TextBlock(text="\n\n".join(steering)))
        async for event in self._add(lt.Message(role="user", content=blocks)):
            yield event
        yield ToolFailures(failed)

    async def _submit(
        self, prompt: str | list[lt.ContentBlock]
    ) -> AsyncIterator[ev.AgentEvent]:
        """Add the user's message: the prompt, what UserPromptSubmit hooks add, and the
        notes for the model. Raises PromptBlockedError when a hook blocks it."""
        content: list[lt.ContentBlock] = (
            [lt.TextBlock(text=prompt)] if isinstance(prompt, str) else list(prompt)
        )
        if self.hook_runner is not None and self.hook_runner.active():
            self.hook_runner.halted = None
            text = "".join(b.text for b in content if isinstance(b, lt.TextBlock))
            blocked, extra = await self.hook_runner.user_prompt_submit(text)
            for notice in self.take_notices():
                yield notice
            if blocked is not None:
                yield ev.Notice(f"Prompt blocked by a UserPromptSubmit hook: {blocked}", "error")
                raise PromptBlockedError
            if extra:
                content.append(lt.TextBlock(text=extra))
        notes, self._model_notes = self._model_notes, []
        content += [lt.TextBlock(text=note) for note in notes]
        async for event in self._add(lt.Message(role="user", content=content)):
            yield event

    async def tell_message(self, message: lt.Message) -> None:
        """Tell the listeners of a completed message (the store keeps it)."""
        for listener in self.listeners:
            await listener.on_message(message)

    async def _tell_turn_end(self, turn: int) -> None:
        for listener in self.listeners:
            await listener.on_turn_end(turn)

    async def _tell_error(self, error: BaseException) -> None:
        for listener in self.listeners:
            await listener.on_error(error)

    async def _add(self, message: lt.Message) -> AsyncIterator[ev.AgentEvent]:
        self.messages.append(message)
        await self.tell_message(message)
        yield ev.MessageAdded(message)

    async def _build_request(self) -> lt.LLMRequest:
        messages = repair_history(self.messages)
        injected = ""
        if self.context_injector is not None:
            injected = await self.context_injector(messages)
        self.last_injected_context = injected
        if injected and messages and messages[-1].role == "user":
            # Injected context rides on the request copy of the last user message, never in
            # the stored history, and leaves the cached system prompt untouched.
            last = messages[-1]
            note = lt.TextBlock(text=f"<context>\n{injected}\n</context>")
            messages = [*messages[:-1], last.model_copy(update={"content": [*last.content, note]})]
        max_tokens = self.max_output_tokens or self.model_info.max_output_tokens
        return lt.LLMRequest(
            system=self.system_prompt,
            messages=messages,
            tools=self.runner.tools.specs(),
            max_tokens=max_tokens,
        )

    async def _stream_turn(self) -> AsyncIterator[ev.AgentEvent | lt.Message]:
        """One response, moving to the fallback model if the provider keeps failing."""
        while True:
            try:
                async for item in self._stream_once():
                    yield item
                return
            except BreakerTrippedError as trip:
                if self.fallback is None:
                    raise trip.error from None
                old = f"{self.provider.name}/{self.provider.model}"
                provider, info = self.fallback()
                self.fallback = None  # one switch per session: no ping-pong
                self.switch_model(provider, info)
                self._consecutive_failures = 0
                yield ev.Notice(
                    f"{old} failed {trip.failures} times in a row ({trip.error}); "
                    f"continuing on the fallback model {provider.name}/{provider.model}.",
                    "warning",
                )

    async def _stream_once(self) -> AsyncIterator[ev.AgentEvent | lt.Message]:
        """Stream one response; yields events, then the completed assistant message.

        On interrupt the partial text becomes the assistant message (incomplete tool calls
        are dropped, so nothing half-specified ever runs) and nothing else is yielded.
        """
        request = await self._build_request()
        async for notice in compaction_notices(self, request):
            yield notice
            request = await self._build_request()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        api_started = time.monotonic()

        async def pump() -> None:
            try:
                async for item in stream_with_retry(self.provider, request, self.retry_policy):
                    queue.put_nowait(item)
            except BaseException as e:
                queue.put_nowait(e)
                return
            queue.put_nowait(DONE)

        task = asyncio.create_task(pump())
        self._active_queue = queue
        partial: list[str] = []
        partial_json: list[str] = []
        calls: dict[int, tuple[str, str]] = {}
        """The tool calls streaming in this answer, by index: (id, name)."""
        done: lt.StreamDone | None = None
        try:
            # One queue.get() per event and no racing tasks: streaming overhead stays low;
            # interrupt() wakes this loop by putting a sentinel on the same queue.
            while not self._interrupt.is_set():
                item = await queue.get()
                if item is DONE or item is INTERRUPTED:
                    break
                if isinstance(item, BaseException):
                    if isinstance(item, ProviderError) and self.fallback is not None:
                        self._consecutive_failures += 1
                        raise BreakerTrippedError(item, self._consecutive_failures)
                    raise item
                match item:
                    case lt.TextDelta(text=text):
                        partial.append(text)
                        yield ev.TextDelta(text)
                    case lt.ThinkingDelta(text=text):
                        yield ev.ThinkingDelta(text)
                    case lt.ToolCallStarted(index=index, id=call_id, name=name):
                        calls[index] = (call_id, name)
                        yield ev.ToolInputDelta(index, call_id, name, "")
                    case lt.ToolCallDelta(index=index, partial_json=piece) if index in calls:
                        call_id, name = calls[index]
                        partial_json.append(piece)
                        yield ev.ToolInputDelta(index, call_id, name, piece)
                    case lt.StreamRetrying(error=error, attempt=attempt, delay=delay):
                        partial.clear()
                        partial_json.clear()
                        calls.clear()
                        self._consecutive_failures += 1
                        if (
                            self.fallback is not None
                            and self._consecutive_failures >= self.breaker_threshold
                        ):
                            raise BreakerTrippedError(error, self._consecutive_failures)
                        known = error if isinstance(error, ProviderError) else None
                        yield ev.StreamReset(
                            str(error), attempt, delay, type(error).__name__,
                            known.provider if known else "", known.status_code if known else None,
                        )
                    case lt.StreamDone() as finished_stream:
                        self._consecutive_failures = 0
                        done = finished_stream
                    case _:
                        pass
        finally:
            self._active_queue = None
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            self.totals.api_ms += int((time.monotonic() - api_started) * 1000)

        if done is None:
            if self._interrupt.is_set():
                async for event in self._keep_interrupted(request, partial, partial_json):
                    yield event
            return
        async for item in self._keep_answer(done):
            yield item

    async def _keep_interrupted(
        self, request: lt.LLMRequest, partial: list[str], partial_json: list[str]
    ) -> AsyncIterator[ev.AgentEvent]:
        """An interrupted answer: its estimated usage, and its text so far as the answer
        (incomplete tool calls are dropped, so nothing half-specified ever runs)."""
        # The provider bills an interrupted answer too (the whole input, the output so
        # far) but sends its usage only at the end: count an estimate.
        usage = lt.Usage(
            input_tokens=estimate_request_tokens(request),
            output_tokens=estimate_tokens("".join(partial) + "".join(partial_json)),
        )
        yield self._count_usage(usage)
        if partial:
            kept = lt.Message(
                role="assistant",
                content=[lt.TextBlock(text="".join(partial))],
                provider=self.provider.name,
                model=self.provider.model,
                stop_reason="interrupted",
            )
            async for event in self._add(kept):
                yield event

    async def _keep_answer(self, done: lt.StreamDone) -> AsyncIterator[ev.AgentEvent | lt.Message]:
        """A completed answer: added to the history, its usage counted; the message last."""
        message = done.message
        # Our own adapters put this entry there (llm.json_repair), so its type is known.
        invalid: dict[str, InvalidToolInput] = done.extra.get(INVALID_TOOL_INPUT) or {}
        self.runner.invalid_inputs.update(invalid)
        if message.provider is None or message.model is None:
            message = message.model_copy(
                update={"provider": self.provider.name, "model": self.provider.model}
            )
        if not message.content:
            message = message.model_copy(update={"content": [lt.TextBlock(text="")]})
        updated = self._count_usage(message.usage or lt.Usage())
        async for event in self._add(message):
            yield event
        yield updated
        yield message

    def _count_usage(self, usage: lt.Usage) -> ev.UsageUpdated:
        """Add one answer's usage (and its cost) to the session's totals."""
        cost = cost_usd(self.model_info, usage)
        self.totals.add(f"{self.provider.name}/{self.provider.model}", usage, cost)
        self.last_context_tokens = (
            usage.input_tokens
            + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens
            + usage.output_tokens
        )
        return ev.UsageUpdated(
            turn_usage=usage,
            session_usage=self.totals.usage,
            turn_cost_usd=cost,
            session_cost_usd=self.totals.cost_usd,
            context_tokens=self.last_context_tokens,
            context_window=self.model_info.context_window,
        )

    async def compact_now(
        self, instructions: str = "", *, force_summary: bool = False, trigger: str = "manual"
    ) -> CompactionResult | None:
        """Compact the history now (`/compact`: `trigger` manual; the threshold: auto)."""
        return await compact_history(
            self, instructions, force_summary=force_summary, trigger=trigger
        )

    async def _run_tools(
        self, calls: list[lt.ToolUseBlock]
    ) -> AsyncIterator[ev.AgentEvent | ToolResults]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.create_task(
            self.runner.run_all(calls, queue.put_nowait, self.queues.has_steering)
        )
        task.add_done_callback(lambda _t: queue.put_nowait(DONE))
        self._active_queue = queue
        if self._interrupt.is_set():
            task.cancel()
        try:
            while True:
                item = await queue.get()
                if item is DONE:
                    break
                if item is INTERRUPTED:
                    task.cancel()  # run_all answers every call and returns
                    continue
                yield item
        finally:
            self._active_queue = None
        yield ToolResults(task.result())
