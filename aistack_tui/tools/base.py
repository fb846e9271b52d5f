"""The contract every tool implements, and the per-session context tools share.

A tool is one class with a pydantic args model (`extra="forbid"`, so a model's typo is a
clear error instead of a silently ignored argument) and an async `run`. The model-facing
description lives beside the code in `prompts/<Tool>.md`. Each tool declares whether it
only reads, which path it touches (for the per-file locks of the tool runner) and, from
its validated arguments, what the permission engine judges (`permission_target`).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from aistack_tui.llm.types import ImageBlock, TextBlock, ToolSpec
from aistack_tui.permissions.targets import PermissionTarget, target_from_input
from aistack_tui.permissions.types import APPROVED_GRANT, ExecGrant
from aistack_tui.tools.diffs import FileDiff
from aistack_tui.tools.services import ToolServices

PROMPTS_DIR = Path(__file__).parent / "prompts"

current_grant: ContextVar[ExecGrant] = ContextVar("current_grant", default=APPROVED_GRANT)
"""What the call being run was allowed to do (set by the tool runner for each call, in
that call's own task). Bash hands it to the sandbox; a tool run outside the runner (the
user's own `!cmd`, tests) gets the approved grant."""

checked_path: ContextVar[Path | None] = ContextVar("checked_path", default=None)
"""The resolved file the permission check judged for the call being run (set by the tool
runner like `current_grant`). A file tool writes only if its own race-free resolution
arrives at this same file (`tools/file_target.py`); None outside the runner."""


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown keys are errors.

    `defer_build`: the validator is built on the tool's first call, not at import; the
    schema the model sees comes from `static_schemas` without building it.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


ArgsT = TypeVar("ArgsT", bound=ToolArgs)


class ToolError(Exception):
    """A failure the model should read and can act on (bad path, no match, timeout)."""


@dataclass(slots=True)
class ToolCallDisplay:
    """How a front end shows a call: neutral data, rendered by the TUI or print mode.

    `summary` is the one line of a tool card (`Read src/app.py (120 lines)`); `detail`
    the expandable body; `diff` the change when the call changes a file, as data (the
    front ends draw its lines; `diff.unified()` is its text).
    """

    summary: str
    detail: str = ""
    diff: FileDiff | None = None
    language: str = ""


@dataclass(slots=True)
class ToolOutput:
    content: str | list[TextBlock | ImageBlock]
    is_error: bool = False
    display: ToolCallDisplay | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class FileReadRecord:
    """What Read saw, so Edit/Write can refuse to overwrite a file changed since."""

    mtime_ns: int
    size: int


@dataclass(slots=True)
class TodoItem:
    content: str
    status: Literal["pending", "in_progress", "completed"]
    active_form: str


@dataclass
class ToolContext:
    """State shared by the tools of one session.

    `project_root` is the git root (or cwd); `cwd` is where relative paths resolve.
    `read_files` maps resolved paths to what Read saw. `bash_cwd` is the working
    directory Bash keeps between calls. `services` holds the collaborators some tools
    need from layers above them (sandbox, memory, skills, code index, the engine's
    checks, the editor), each typed by the Protocol the tools call.
    """

    project_root: Path
    cwd: Path
    home: Path
    read_files: dict[Path, FileReadRecord] = field(default_factory=dict)
    bash_cwd: Path | None = None
    todos: list[TodoItem] = field(default_factory=list)
    session_id: str = ""
    additional_directories: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    """Variables the settings' `env` adds to every command's environment."""
    services: ToolServices = field(default_factory=ToolServices)
    file_locks: dict[Path, asyncio.Lock] = field(default_factory=dict)

    def resolve(self, path: str) -> Path:
        """An absolute, normalised path: `~` expanded, relative to `cwd`, symlinks followed.

        A name for showing, locking and searching; never open a file the model named by
        it (it may be swapped for a link right after): Read, Write and Edit go through
        `file_target.open_target`."""
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = self.cwd / p
        return p.resolve()

    def lock_for(self, path: Path) -> asyncio.Lock:
        lock = self.file_locks.get(path)
        if lock is None:
            lock = self.file_locks[path] = asyncio.Lock()
        return lock


@cache
def load_prompt(name: str) -> str:
    """The model-facing description of tool `name`, from `prompts/<name>.md`."""
    return (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8").strip()


_SCHEMAS: dict[type[Any], dict[str, Any]] = {}


class Tool(ABC, Generic[ArgsT]):
    """One built-in tool. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    args_model: ClassVar[type[ToolArgs]]
    read_only: ClassVar[bool] = False
    """True when the tool never changes anything outside the agent."""
    needs_permission: ClassVar[bool] = True
    """False for tools that act only inside the agent (TodoWrite, Skill, Task, ...)."""

    @property
    def description(self) -> str:
        return load_prompt(self.name)

    def offered(self) -> bool:
        """Whether the model is told about this tool now (WebSearch: only while the
        session's provider has a search of its own)."""
        return True

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description, input_schema=self.input_schema()
        )

    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema, made once per process (shared: do not mutate it).

        The pregenerated copy is used when it matches the args model (`static_schemas`),
        so a session's first request builds no pydantic schema.
        """
        cls = type(self)
        schema = _SCHEMAS.get(cls)
        if schema is None:
            from aistack_tui.tools.static_schemas import pregenerated

            schema = pregenerated(cls)
            if schema is None:
                schema = cls.generate_input_schema()
            _SCHEMAS[cls] = schema
        return schema

    @classmethod
    def generate_input_schema(cls) -> dict[str, Any]:
        """The schema generated from `args_model` (the source of truth for the file)."""
        schema = cls.args_model.model_json_schema(by_alias=True)
        schema.pop("title", None)
        return schema

    def parse_args(self, raw: dict[str, Any]) -> ArgsT:
        """Validate the model's input; raises ToolError with a readable message."""
        try:
            return self.args_model.model_validate(raw)  # type: ignore[return-value]
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
                for err in e.errors()
            )
            raise ToolError(f"Invalid arguments for {self.name}: {problems}") from e

    def path_argument(self, args: ArgsT) -> str | None:
        """The file or directory the call touches, if any (for locks and the summary line;
        the permission engine judges `permission_target`)."""
        return getattr(args, "file_path", None) or getattr(args, "path", None)

    def permission_target(self, args: ArgsT) -> PermissionTarget:
        """What the call touches, for the permission engine to judge.

        Built-in tools declare it from their typed arguments. This default reads the input
        the way settings describe a tool of this name, so a tool that declares nothing
        (an MCP tool, a tool a front end adds) is judged exactly as a call with that name
        and input from anywhere else would be: by its bare rules when the name is not a
        built-in's.
        """
        return target_from_input(self.name, args.model_dump(by_alias=True, exclude_none=True))

    def describe(self, args: ArgsT) -> ToolCallDisplay:
        """The one-line summary shown before the call runs."""
        target = self.path_argument(args)
        return ToolCallDisplay(summary=f"{self.name} {target}" if target else self.name)

    async def validate(self, args: ArgsT, ctx: ToolContext) -> None:
        """Raise ToolError for a call that cannot succeed (a file that does not exist).

        Checked before the user is asked to approve the call, so nobody approves a call
        that fails anyway; the error goes to the model instead. A tool with a `preview`
        (Edit, Write) is checked by planning its change there.
        """
        return None

    @abstractmethod
    async def run(self, args: ArgsT, ctx: ToolContext) -> ToolOutput: ...


class ToolRegistry:
    """The tools of one agent, by name. Subagents get a filtered clone.

    `admits` decides which registered tools this session may offer at all (Claude
    Code's `--tools` and bare deny rules take a tool out of the model's context): a tool
    it rejects is left out of `specs()` and `get()` as if it were not there, so a call to
    it is answered like a call to an unknown tool. A tool's own `offered()` says whether
    it is offered now (WebSearch with a provider that can search). `names()` still lists
    every tool, for the code that registers and replaces them.
    """

    def __init__(
        self,
        tools: list[Tool[Any]] | None = None,
        admits: Callable[[str], bool] = lambda _name: True,
    ) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self.admits = admits
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool[Any] | None:
        tool = self._tools.get(name)
        return tool if tool is not None and self.admits(name) else None

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """What the model is told: the tools offered now."""
        return [t.spec() for n, t in self._tools.items() if t.offered() and self.admits(n)]

    def offered_names(self) -> list[str]:
        return [n for n, t in self._tools.items() if t.offered() and self.admits(n)]

    def clone(self, exclude: set[str] | None = None) -> ToolRegistry:
        exclude = exclude or set()
        return ToolRegistry([t for n, t in self._tools.items() if n not in exclude], self.admits)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)
