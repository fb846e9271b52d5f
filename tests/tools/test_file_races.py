"""A path swapped under a file tool's call never sends the write outside the project.

The attack (issue 21): in one batch an allowed command loops `ln -sfn ~/.gitconfig x`
while the model sends many `Write x`. Here a thread plays the command, flipping names
between a real file or directory inside the project and a symlink leaving it (or
pointing at `.git/config`), as fast as it can, while thousands of Write and Edit calls
go through the real tool runner: the permission engine checks each, the tool runs it;
Reads race a link to a file a deny rule covers the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aistack_tui.agent.ports import ApprovalDecision, ApprovalRequest
from aistack_tui.agent.tool_runner import ToolRunner
from aistack_tui.llm.types import ToolUseBlock
from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleLayer
from aistack_tui.tools.base import FileReadRecord, ToolContext, ToolRegistry
from aistack_tui.tools.builtin import builtin_tools

CALLS = 3000
ROUNDS_SECONDS = 6.0  # the most it may take on a loaded machine; ~2 s usually
DENIED = "DENIED-TOKEN-5e2a"
BATCH = 60


class RejectAll:
    """Nobody approves: a call that asks (outside the project, protected) never runs."""

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision("reject")


def _flip(stop: threading.Event, name: Path, inside: Path, outside: Path) -> None:
    """Point the symlink `name` at `inside`, then at `outside`, and again, each in one
    rename (`ln -sfn`), as fast as the thread runs."""
    tmp = name.with_name(name.name + ".tmp")
    while not stop.is_set():
        for target in (inside, outside):
            with contextlib.suppress(OSError):
                os.symlink(target, tmp)
                os.replace(tmp, name)


@contextlib.contextmanager
def _flipping(*targets: tuple[Path, Path, Path]) -> Iterator[None]:
    stop = threading.Event()
    threads = [threading.Thread(target=_flip, args=(stop, *t), daemon=True) for t in targets]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # hand the GIL over often: more interleavings per second
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        sys.setswitchinterval(old)


def _record_read(ctx: ToolContext, path: Path) -> None:
    st = path.stat()
    ctx.read_files[path] = FileReadRecord(st.st_mtime_ns, st.st_size)


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*")) if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    project = (tmp_path / "proj").resolve()
    outside = (tmp_path / "user-home").resolve()
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / "d.inside").mkdir()
    (project / "x.inside").write_text("inside\n")
    (project / "y.inside").write_text("inside\n")
    outside.mkdir(exist_ok=True)
    (outside / ".gitconfig").write_text("[user]\n")
    (project / "private").mkdir()
    (project / "private" / "token").write_text(DENIED + "\n")
    (project / "z.inside").write_text("public\n")
    return project, outside, tmp_path


async def test_symlink_swaps_racing_thousands_of_writes_never_write_outside(
    world: tuple[Path, Path, Path],
) -> None:
    project, outside, tmp_path = world
    engine = PermissionEngine(
        layers=[RuleLayer("test", allow=[], ask=[], deny=["Read(./private/**)"])],
        mode="acceptEdits",  # edits inside the project run without asking
        project_root=project,
        home=outside,
    )
    ctx = ToolContext(project_root=project, cwd=project, home=outside)
    runner = ToolRunner(
        tools=ToolRegistry(builtin_tools()),
        permissions=engine,
        approver=RejectAll(),
        context=ctx,
        results_dir=tmp_path / "results",
    )
    before_outside = _snapshot(outside)
    git_config = (project / ".git" / "config").read_bytes()
    written = refused = 0
    calls_made = 0
    # The model may read .git/config freely: give every Write the fresh Read it needs, so
    # only the path decides where a write lands.
    _record_read(ctx, project / ".git" / "config")
    with _flipping(
        # a new file under a directory that becomes a link to the home directory
        (project / "d", project / "d.inside", outside),
        # a file that becomes a link to a file outside that does not exist yet
        (project / "x", project / "x.inside", outside / ".bashrc"),
        # a file that becomes a link to the repository's config, inside the project
        (project / "y", project / "y.inside", project / ".git" / "config"),
        # a file to read that becomes a link to a file a deny rule keeps from Read
        (project / "z", project / "z.inside", project / "private" / "token"),
    ):
        deadline = time.monotonic() + ROUNDS_SECONDS
        round_no = 0
        while calls_made < CALLS and time.monotonic() < deadline:
            round_no += 1
            calls: list[ToolUseBlock] = []
            for i in range(BATCH):
                n = f"{round_no}-{i}"
                if i % 4 == 3:
                    calls.append(ToolUseBlock(id=f"c{n}", name="Read", input={"file_path": "z"}))
                    continue
                target = ("d/.gitconfig-" + n, "x", "y")[i % 4]
                calls.append(ToolUseBlock(id=f"c{n}", name="Write", input={
                    "file_path": target, "content": f"pwned {n}\n"}))
            for name in ("x.inside", "y.inside"):
                _record_read(ctx, project / name)
            results = await runner.run_all(calls, lambda _e: None, lambda: False)
            calls_made += len(calls)
            for block in results:
                assert DENIED not in block.text()
                if block.is_error:
                    refused += 1
                else:
                    written += 1
            await asyncio.sleep(0)
    assert calls_made >= 1000, f"only {calls_made} calls in {ROUNDS_SECONDS}s"
    assert written > 0 and refused > 0, (written, refused)  # the race was really run
    assert _snapshot(outside) == before_outside
    assert not (outside / ".bashrc").exists()
    assert (project / ".git" / "config").read_bytes() == git_config
