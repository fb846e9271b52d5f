"""The Sandbox protocol (seed 000): validate paths, and run commands inside a boundary.

A sandbox is the OS-level boundary under the permission engine: the engine decides whether
a command may run, the sandbox limits what it can touch once it does. Bash asks the
sandbox in `ToolContext.services.sandbox` to wrap its argv; `exec` is the standalone
way to run one command (for evals, hooks or anything else that is not the Bash tool).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.permissions.types import ExecGrant
from aistack_tui.sandbox.policy import ExecPolicy, ExposurePolicy, SandboxPolicyError
from aistack_tui.tools.process import Captured, kill_group, read_stream, start_group

OUTPUT_BUDGET = 64 * 1024


class SandboxError(Exception):
    """A path outside the sandbox, or a sandbox that cannot start; the message says why."""


@dataclass(frozen=True, slots=True)
class ExecResult:
    output: str
    """stdout and stderr interleaved, cut to a head and tail when very long."""
    returncode: int
    timed_out: bool = False


def temp_dirs() -> list[Path]:
    """Where programs expect to write scratch files: `$TMPDIR` (or /tmp) and /var/tmp."""
    dirs = [Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")]
    out: list[Path] = []
    for d in dirs:
        with contextlib.suppress(OSError):
            d = d.resolve()
        if d.is_dir() and d not in out:
            out.append(d)
    return out


class Sandbox(ABC):
    """Where commands run and which paths they may write."""

    name: str = "sandbox"
    confined: bool = False
    """True when the OS enforces the boundary; False when only our path checks do."""

    def __init__(
        self, roots: Sequence[Path] = (), *, exposure: ExposurePolicy | None = None
    ) -> None:
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        self.exposure = exposure
        """The engine's rules turned into masks for each command (None: no masks)."""

    def policy_for(self, grant: ExecGrant, cwd: Path) -> ExecPolicy:
        """The confinement of one command the engine allowed with `grant`.

        Raises SandboxError when it cannot be confined as asked.
        """
        if self.exposure is None:
            return ExecPolicy(grant.tier, grant.network)
        try:
            return self.exposure.policy(grant, keep_visible=[cwd])
        except SandboxPolicyError as e:
            raise SandboxError(str(e)) from e

    def after_command(self, policy: ExecPolicy) -> list[str]:
        """After a command that could write, walk again in the background: the next
        command's masks must see what it created, and a repository it created that would
        run a program is made harmless (policy.quarantine_new_git). Returns notes for the
        model about what earlier commands left and aistack moved away."""
        if self.exposure is None or policy.tier == "read":
            return []
        notes = list(self.exposure.quarantined)
        self.exposure.quarantined.clear()
        self.exposure.prefetch()
        return notes

    def close(self) -> None:
        """Finish the walk under way, so a repository the last command created is checked
        before aistack exits and the user's next `git status` runs."""
        if self.exposure is not None:
            self.exposure.settle()

    def validate_path(self, path: str | Path, base: Path | None = None) -> Path:
        """The resolved path if it lies inside one of the roots (any path when no roots).

        Symlinks and `..` are resolved first, so neither can step outside.
        """
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = (base or (self.roots[0] if self.roots else Path.cwd())) / p
        resolved = p.resolve()
        if not self.roots:
            return resolved
        for root in self.roots:
            if resolved == root or root in resolved.parents:
                return resolved
        allowed = ", ".join(str(r) for r in self.roots)
        raise SandboxError(f"{resolved} is outside the workspace ({allowed})")

    @abstractmethod
    def wrap_command(
        self,
        argv: list[str],
        *,
        cwd: Path,
        writable: Sequence[Path] = (),
        policy: ExecPolicy | None = None,
    ) -> list[str]:
        """The argv that runs `argv` inside this sandbox, with `writable` dirs writable.

        `policy` narrows it for one command (read-only tier, masks, network); without one
        the command gets the write tier and the sandbox's own network setting.
        """

    async def exec(
        self,
        command: str,
        timeout: float,
        working_dir: str | Path | None = None,
        *,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run a shell command to completion (killed with its children on timeout)."""
        cwd = self.validate_path(working_dir) if working_dir else (
            self.roots[0] if self.roots else Path.cwd()
        )
        argv = self.wrap_command(["bash", "-c", command], cwd=cwd)
        try:
            proc = await start_group(asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=env if env is not None else dict(os.environ),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            ), grace=0.5)
        except OSError as e:
            raise SandboxError(f"cannot start {argv[0]}: {e.strerror or e}") from e
        assert proc.stdout is not None
        captured = Captured.with_budget(OUTPUT_BUDGET // 2, OUTPUT_BUDGET // 2)
        reading = asyncio.ensure_future(read_stream(proc.stdout, captured))
        timed_out = False
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await kill_group(proc, grace=0.5)
        except BaseException:
            await asyncio.shield(kill_group(proc, grace=0.5))
            raise
        finally:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reading), 1)
            reading.cancel()
        code = proc.returncode if proc.returncode is not None else -9
        return ExecResult(captured.text(), code, timed_out)
