"""Turn control: what the user sends and how a running turn is steered.

Prompts (with a command file's `allowed-tools` granted for that run only), steering and
follow-ups, interrupts, notices, notes for the model, and the user's own `!command`s.
Part of the session facade (`session/live.py`); front ends reach it through `LiveSession`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aistack_tui.permissions.rules import RuleError, parse_rule
from aistack_tui.session.command_shell import inline_shell_output
from aistack_tui.settings.layers import ConfigError
from aistack_tui.skills.commands import CommandSet
from aistack_tui.tools.bash import HEAD_BYTES, TAIL_BYTES
from aistack_tui.tools.process import Captured, kill_group, read_stream, start_group
from aistack_tui.trust_gate import untrusted_command_names

if TYPE_CHECKING:
    from aistack_tui.agent import events as ev
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.llm import types as lt
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.session.config import RunConfig
    from aistack_tui.tools.base import ToolContext


@dataclass(frozen=True, slots=True)
class UserCommand:
    """A `!command` the user ran: its output as kept for the model, and its exit code."""

    command: str
    output: str
    exit_code: int


class TurnControl:
    """Runs the user's turns on the agent and steers the one running."""

    def __init__(
        self,
        *,
        agent: Agent,
        engine: PermissionEngine,
        config: RunConfig,
        tool_context: ToolContext,
        record_usage: Callable[[], Awaitable[None]],
    ) -> None:
        self.agent = agent
        self.engine = engine
        self.config = config
        self.tool_context = tool_context
        self._record_usage = record_usage
        """Stores the usage a run added (the conversation's ledger), after each run."""
        self._next_run_rules: list[str] = []

    @property
    def cwd(self) -> Path:
        return self.config.cwd

    @property
    def running(self) -> bool:
        return self.agent.running

    def take_notices(self) -> list[ev.Notice]:
        """Notices raised while the session opened (shown before the first turn)."""
        return self.agent.take_notices()

    def notify(self, text: str, level: str = "warning") -> None:
        """A notice the agent emits with its next events."""
        self.agent.notify(text, level)

    def add_model_note(self, text: str) -> None:
        """Something the model reads with the next prompt (a `!command`'s output); tagged
        `<user-...>` so front ends leave it out of the transcript."""
        self.agent.add_model_note(text)

    async def run_user_command(self, command: str, timeout: float = 120.0) -> UserCommand:
        """`!command`: run the user's own shell command in the session's directory. Its
        output is kept as the Bash tool keeps it (the first 16 kB and the last 12 kB, the
        cut said) and is handed to the model with the next prompt."""

        proc = await start_group(asyncio.create_subprocess_shell(
            command, cwd=self.cwd, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        ), grace=0.5)
        captured = Captured.with_budget(HEAD_BYTES, TAIL_BYTES)
        assert proc.stdout is not None
        try:
            await asyncio.wait_for(read_stream(proc.stdout, captured), timeout)
            code = await proc.wait()
            timed_out = False
        except TimeoutError:
            await kill_group(proc)
            code, timed_out = 124, True
        except asyncio.CancelledError:
            # Interrupted (Esc, Ctrl+C): the command stops with everything it started.
            await asyncio.shield(kill_group(proc, grace=0.5))
            raise
        output = captured.text() + ("\n(timed out)" if timed_out else "")
        self.add_model_note(
            f"<user-shell-command>{command}</user-shell-command>\n"
            f'<user-shell-output exit_code="{code}">\n{output}\n</user-shell-output>'
        )
        return UserCommand(command, output, code)

    async def run(
        self, prompt: str | list[lt.ContentBlock]
    ) -> AsyncGenerator[ev.AgentEvent, None]:
        """One user turn: every event until (and including) `TurnEnded`.

        Closing the generator early (a front end cancelled on Esc) closes the agent's
        stream, whose `finally` blocks persist what was said so far.
        """
        granted = self._grant_next_run_rules()
        try:
            async with contextlib.aclosing(self.agent.run(prompt)) as events:
                async for event in events:
                    yield event
        finally:
            for rule in granted:
                self.engine.revoke_session(rule)
        await self._record_usage()

    def allow_during_next_run(self, rules: Sequence[str]) -> None:
        """Rules allowed without asking during the next `run` only: a slash command's
        `allowed-tools`. Raises ConfigError for a rule that does not parse."""

        for rule in rules:
            try:
                parse_rule(rule, "allowed-tools")
            except RuleError as e:
                raise ConfigError(str(e)) from e
        self._next_run_rules = list(rules)

    def _grant_next_run_rules(self) -> list[str]:
        """Grant the rules for this run; only the ones not granted already are returned
        (to be revoked after it), so a "don't ask again" grant outlives the run."""
        rules, self._next_run_rules = self._next_run_rules, []
        held = set(self.engine.session_grants())
        granted: list[str] = []
        for rule in rules:
            if rule not in held:
                self.engine.grant_session(rule)
                granted.append(rule)
                held.add(rule)
        return granted

    def steer(self, text: str) -> None:
        """A message for the running turn, delivered at the agent's next opportunity."""
        self.agent.steer(text)

    def follow_up(self, text: str) -> None:
        """A message sent as the next prompt once the running turn has ended."""
        self.agent.follow_up(text)

    def interrupt(self) -> None:
        """Stop the running turn: partial text kept, every open tool call answered."""
        self.agent.interrupt()

    def take_queued(self) -> list[str]:
        """Steering and follow-ups the agent did not get to before its run ended."""
        queues = self.agent.queues
        return queues.take_steering() + queues.take_follow_ups()

    def custom_commands(self) -> CommandSet:
        """The slash command files of the project and the user (`.claude/commands/`,
        `.aistack/commands/`), read now; a project command's `allowed-tools` only once
        the project's current version of it is trusted."""

        user_home = Path(self.config.env.get("HOME", str(Path.home())))
        found = CommandSet.discover(self.config.project_root, self.config.home, user_home)
        found.withhold_allowed_tools(untrusted_command_names(self.config))
        return found

    async def prepare_command_prompt(self, text: str, allowed_tools: Sequence[str]) -> str:
        """A command file's expanded text, ready to send: its `` !`command` `` lines run
        (with its `allowed-tools` granted while they are checked) and replaced by their
        output; its `allowed-tools` are then allowed for the next run. `@path` mentions
        in it attach their files as in any prompt (`session.mentions.prompt_blocks`)."""

        self.allow_during_next_run(allowed_tools)
        granted = self._grant_next_run_rules()
        self._next_run_rules = list(allowed_tools)
        try:
            return await inline_shell_output(text, self.engine, self.tool_context, self.cwd)
        finally:
            for rule in granted:
                self.engine.revoke_session(rule)
