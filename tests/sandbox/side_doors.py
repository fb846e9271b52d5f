"""The side-door corpus: what a confined command leaves behind for a later step to run.

Each case is an attack a command the engine allowed could make (a rule such as
`Bash(python3:*)`, `Bash(make test:*)`, bypassPermissions or the user's yes: the write
tier, with or without git), and the step that later runs outside any sandbox: the user's
next `git status`, a new shell, a socket server on the host. A case counts only when it is
real: run straight in bash in a throwaway world, its proof (a marker file, a changed file
outside the project, a connection) happens. Run through the Bash tool in the sandbox, it
must not.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleLayer
from aistack_tui.permissions.types import ExecGrant
from aistack_tui.sandbox import BubblewrapSandbox
from aistack_tui.sandbox.bubblewrap import find_bwrap
from aistack_tui.sandbox.policy import ExposurePolicy
from aistack_tui.tools.base import ToolContext, current_grant
from aistack_tui.tools.bash import BashArgs, BashTool
from aistack_tui.tools.services import ToolServices

RULE = ExecGrant("write", network=False)
"""A command a rule allowed (`Bash(python3:*)`, `Bash(make test:*)`): it writes."""
RULE_GIT = ExecGrant("write", network=False, git=True)
"""A compound command with git in it (`git add -A && make test`)."""


@dataclass(frozen=True)
class World:
    """A throwaway machine: a home, a project (a git repository with a tracked `.env`),
    a directory outside both, and the marker a successful attack creates."""

    base: Path
    home: Path
    project: Path
    outside: Path

    @property
    def marker(self) -> Path:
        return self.outside / "PWNED"

    def fill(self, text: str) -> str:
        return (text.replace("{marker}", str(self.marker)).replace("{home}", str(self.home))
                .replace("{project}", str(self.project)).replace("{outside}", str(self.outside)))

    def env(self) -> dict[str, str]:
        return {**os.environ, "HOME": str(self.home), "GIT_CONFIG_NOSYSTEM": "1",
                "XDG_CONFIG_HOME": str(self.home / ".config")}

    def user_runs(self, command: str, cwd: Path | None = None) -> str:
        """The user's next step, outside any sandbox."""
        run = subprocess.run(["bash", "-c", self.fill(command)], cwd=cwd or self.project,
                             env=self.env(), capture_output=True, text=True, timeout=30,
                             check=False)
        return run.stdout + run.stderr


def make_world(base: Path, *, project_is_home: bool = False) -> World:
    home = base / "home"
    project = home if project_is_home else base / "project"
    outside = base / "outside"
    for d in (home, project, outside):
        d.mkdir(parents=True, exist_ok=True)
    world = World(base.resolve(), home.resolve(), project.resolve(), outside.resolve())
    (world.home / ".gitconfig").write_text("[user]\n\temail = u@example.com\n\tname = U\n")
    (world.project / "app.py").write_text("print('hi')\n")
    (world.project / ".env").write_text("API_KEY=sk-live-123\n")
    # Written an hour ago, as files in a real project are: git trusts their stat data.
    # (A file changed in the same second as the index is "racily clean": git reads it.)
    world.user_runs("touch -d '-1 hour' app.py .env && git init -q && git add -A && "
                    "git commit -qm init")
    return world


@dataclass(frozen=True)
class Attack:
    name: str
    command: str
    next_step: str = "git status --short"
    grant: ExecGrant = RULE
    setup: str = ""
    deny: tuple[str, ...] = ()
    proof: str = "marker"
    """`marker`: the marker file appears; `changed:PATH`: PATH (in the world) changes."""
    project_is_home: bool = False
    next_cwd: str = ""
    teardown: str = ""
    """Run after the case (Python's own tree removal cannot take a 1,500-deep tree)."""


def snapshot(world: World, attack: Attack) -> bytes | None:
    if not attack.proof.startswith("changed:"):
        return None
    path = Path(world.fill(attack.proof.removeprefix("changed:")))
    return path.read_bytes() if path.exists() else None


def escaped(world: World, attack: Attack, before: bytes | None) -> bool:
    world.user_runs(attack.next_step, world.project / attack.next_cwd)
    if attack.proof == "marker":
        return world.marker.exists()
    path = Path(world.fill(attack.proof.removeprefix("changed:")))
    return (path.read_bytes() if path.exists() else None) != before


def run_directly(world: World, attack: Attack) -> bool:
    """Whether the attack works unconfined (the case is real)."""
    if attack.setup:
        world.user_runs(attack.setup)
    before = snapshot(world, attack)
    world.user_runs(attack.command)
    return escaped(world, attack, before)


def confined_context(world: World, deny: tuple[str, ...] = ()) -> ToolContext:
    return sandboxed_context(world.project, world.home, list(deny))


def sandboxed_context(project: Path, home: Path, deny: list[str]) -> ToolContext:
    """A tool context whose Bash runs in bubblewrap with the masks and frozen paths a
    session builds from a permission engine with these deny rules."""
    engine = PermissionEngine(
        layers=[RuleLayer("test", allow=[], ask=[], deny=deny)],
        mode="default",
        project_root=project,
        home=home,
    )
    exposure = ExposurePolicy(
        [project],
        home,
        hides=engine.hidden_from_commands,
        freezes=engine.frozen_for_commands,
        rule_roots=engine.denied_roots,
    )
    sandbox = BubblewrapSandbox([project], bwrap=find_bwrap() or "bwrap", exposure=exposure)
    return ToolContext(project_root=project, cwd=project, home=home,
                       services=ToolServices(sandbox=sandbox))


async def run_in_sandbox(ctx: ToolContext, command: str, grant: ExecGrant) -> str:
    token = current_grant.set(grant)
    try:
        out = await BashTool().run(BashArgs(command=command), ctx)
    finally:
        current_grant.reset(token)
    return str(out.content)


async def run_confined(world: World, attack: Attack) -> tuple[bool, str]:
    """(escaped, what the command printed) with the attack run by the Bash tool."""
    if attack.setup:
        world.user_runs(attack.setup)
    before = snapshot(world, attack)
    ctx = confined_context(world, attack.deny)
    out = await run_in_sandbox(ctx, world.fill(attack.command), attack.grant)
    sandbox = ctx.services.sandbox
    sandbox.close()  # what aistack does at exit: the walk after the command finishes
    return escaped(world, attack, before), out


@contextmanager
def unix_listener(path: Path) -> Iterator[list[bytes]]:
    """A Unix socket server on the host that records what each connection sends."""
    received: list[bytes] = []
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    received.append(conn.recv(4096) or b"<connected>")
                except OSError:
                    received.append(b"<connected>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        stop.set()
        thread.join(2)
        server.close()
        path.unlink(missing_ok=True)
