"""What a session lends its tools beyond their own call, as typed fields.

Some tools need a collaborator from a layer above them: Bash the sandbox, MemorySearch the
memory store, Skill the skill registry, CodeSearch the code index, McpToolSearch the
session's tool registry, the search tools the permission engine's answers about files and
URLs, the file tools the editor driving the session (ACP). Each is described here only by
the Protocol the tools call, so this layer imports none of the layers that implement them,
and a missing collaborator is a field left None rather than a string key nobody set.

The composition root (`bootstrap.open_session`) fills `ToolServices` once; the session
changes only what a front end switches at run time (the editor's files and terminal, the
listener of a running command's output).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from aistack_tui.permissions.access import (
    fetch_check,
    read_allowed,
    read_behavior,
    resource_behavior,
)
from aistack_tui.permissions.types import Behavior, Decision, ExecGrant, PermissionChecker

FileReader = Callable[[Path], Awaitable[str]]
FileWriter = Callable[[Path, str], Awaitable[None]]
ToolOutputListener = Callable[[str, str], None]
"""`listener(tool_use_id, text)`: what a running call prints, as it prints it."""


@dataclass(frozen=True, slots=True)
class EditorFiles:
    """The editor's text files: `read` returns a buffer's current text, `write` replaces
    it (the editor saves it); None where the editor does not offer it. Either raises
    when the editor cannot; the caller falls back to the disk and says so."""

    read: FileReader | None
    write: FileWriter | None


class TerminalRun(Protocol):
    """One command running in an editor terminal (ACP `terminal/*` on one terminal id)."""

    @property
    def terminal_id(self) -> str: ...

    async def wait_for_exit(self) -> tuple[int | None, str | None]:
        """(exit code, signal name) once the command has exited."""
        ...

    async def output(self) -> tuple[str, bool]:
        """(output so far, whether the editor cut its beginning to its byte limit)."""
        ...

    async def kill(self) -> None: ...

    async def release(self) -> None:
        """Free the terminal (killing the command if it still runs); the editor keeps
        showing what it printed."""
        ...


class EditorTerminal(Protocol):
    """Starts commands in the editor's terminals."""

    async def create(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                     output_byte_limit: int, tool_use_id: str) -> TerminalRun:
        """Start `argv` (no shell is added) in `cwd` with `env`; the editor shows the
        terminal in the tool call `tool_use_id`."""
        ...


class CommandSandbox(Protocol):
    """What Bash asks of the session's sandbox (`sandbox.base.Sandbox`). The policy is
    the sandbox's own value (`ExecPolicy`); Bash only hands it back and reads its tier."""

    def policy_for(self, grant: ExecGrant, cwd: Path) -> Any: ...

    def wrap_command(
        self, argv: list[str], *, cwd: Path, writable: Sequence[Path] = (), policy: Any = None
    ) -> list[str]: ...

    def after_command(self, policy: Any) -> list[str]: ...


class MemoryStore(Protocol):
    """What the memory tools call (`memory.manager.MemoryManager`); hits and records are
    the memory layer's values, read by attribute."""

    async def search(self, query: str, limit: int = ...) -> Sequence[Any]: ...

    async def write(
        self, content: str, kind: Any = ..., *, source: Any, session_id: str | None = ...
    ) -> Any: ...


class SkillLibrary(Protocol):
    """What the Skill tool calls (`skills.registry.SkillRegistry`)."""

    def get(self, name: str) -> Any: ...

    def names(self) -> list[str]: ...

    def load_body(self, name: str) -> str: ...

    def files(self, name: str) -> Sequence[Any]: ...

    def activate(self, name: str) -> Any: ...


class CodeIndex(Protocol):
    """What CodeSearch calls (`knowledge.KnowledgeIndex`); hits are read by attribute."""

    async def search(self, query: str, limit: int = ...) -> Sequence[Any]: ...


class ToolSink(Protocol):
    """Where McpToolSearch puts the tools it loads (the session's `ToolRegistry`)."""

    def register(self, tool: Any) -> None: ...


class ShellPool(Protocol):
    """The session's background shells (`tools.background.BackgroundShells`, made on
    first use by `shells_of`)."""

    async def aclose(self) -> None: ...


@dataclass
class ToolServices:
    """The collaborators of one session's tools; None where the session has none."""

    sandbox: CommandSandbox | None = None
    memory: MemoryStore | None = None
    skills: SkillLibrary | None = None
    knowledge: CodeIndex | None = None
    tool_registry: ToolSink | None = None
    read_allowed: Callable[[Path], bool] | None = None
    """Whether a Read of this file would be allowed without asking."""
    read_behavior: Callable[[Path], Behavior] | None = None
    """What the engine would answer a Read of this file."""
    fetch_check: Callable[[str], Decision] | None = None
    """What a WebFetch call for this URL would be told."""
    resource_behavior: Callable[[str, str], Behavior] | None = None
    """What reading MCP resource (server, uri) would get."""
    tool_output: ToolOutputListener | None = None
    """Who shows a running call's output (a front end's running tool card)."""
    editor_files: EditorFiles | None = None
    editor_terminal: EditorTerminal | None = None
    background: ShellPool | None = None

    @classmethod
    def checked_by(
        cls,
        engine: PermissionChecker,
        *,
        sandbox: CommandSandbox | None = None,
        memory: MemoryStore | None = None,
        skills: SkillLibrary | None = None,
        knowledge: CodeIndex | None = None,
        tool_registry: ToolSink | None = None,
    ) -> ToolServices:
        """A session's services, with the file, URL and resource checks of tools that
        reach past their own call (Grep, Glob, CodeSearch, WebFetch's redirects, MCP
        resources) asking `engine`."""
        return cls(
            sandbox=sandbox,
            memory=memory,
            skills=skills,
            knowledge=knowledge,
            tool_registry=tool_registry,
            read_allowed=read_allowed(engine),
            read_behavior=read_behavior(engine),
            fetch_check=fetch_check(engine),
            resource_behavior=resource_behavior(engine),
        )
