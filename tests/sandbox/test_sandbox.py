"""LocalSandbox and BubblewrapSandbox: path validation, confinement, network, fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.sandbox import (
    BubblewrapSandbox,
    LocalSandbox,
    SandboxError,
    SandboxUnavailableError,
    detect_sandbox,
)
from aistack_tui.sandbox.bubblewrap import find_bwrap, probe_bwrap
from aistack_tui.tools.base import ToolContext
from aistack_tui.tools.bash import BashArgs, BashTool
from aistack_tui.tools.services import ToolServices


def _bwrap_reason() -> str:
    path = find_bwrap()
    if path is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    return probe_bwrap(path, False)


BWRAP_REASON = _bwrap_reason()
needs_bwrap = pytest.mark.skipif(bool(BWRAP_REASON), reason=BWRAP_REASON or "bwrap works")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the project and outside the sandbox's scratch directory."""
    d = tmp_path / "user-home" / "elsewhere"
    d.mkdir(parents=True)
    return d


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    d = tmp_path / "scratch"
    d.mkdir()
    return d


def confined(project: Path, scratch: Path, *, network: bool = False) -> BubblewrapSandbox:
    """bwrap with our scratch dir as its only temp dir: pytest's tmp_path is under /tmp,
    which the default sandbox keeps writable, so "outside" must not be under a temp dir."""
    return BubblewrapSandbox([project], allow_network=network, temp=[scratch],
                             bwrap=find_bwrap() or "bwrap")


CONNECT = (
    "python3 -c \"import socket,sys; s=socket.socket(); s.settimeout(2); "
    "s.connect(('127.0.0.1', int(sys.argv[1]))); print('connected')\" {port}"
)


def test_local_sandbox_validates_paths_inside_the_workspace(git_repo: Path, tmp_path: Path) -> None:
    sandbox = LocalSandbox([git_repo])
    assert sandbox.validate_path("src/app.py") == git_repo / "src" / "app.py"
    with pytest.raises(SandboxError, match="outside the workspace"):
        sandbox.validate_path("../escape.txt")
    (git_repo / "link").symlink_to(tmp_path)
    with pytest.raises(SandboxError):
        sandbox.validate_path("link/x")


async def test_local_sandbox_runs_commands_as_subprocesses(git_repo: Path) -> None:
    sandbox = LocalSandbox([git_repo])
    result = await sandbox.exec("echo hi; pwd; exit 3", timeout=10)
    assert result.returncode == 3
    assert result.output.split() == ["hi", str(git_repo)]
    slow = await sandbox.exec("sleep 5", timeout=0.2)
    assert slow.timed_out


def test_detect_off_is_local_without_notice(git_repo: Path) -> None:
    sandbox, notice = detect_sandbox("off", False, project_root=git_repo)
    assert isinstance(sandbox, LocalSandbox) and notice == ""


def test_detect_auto_falls_back_with_a_notice_when_bwrap_is_missing(git_repo: Path) -> None:
    sandbox, notice = detect_sandbox("auto", False, project_root=git_repo,
                                     bwrap=str(git_repo / "no-such-bwrap"))
    assert isinstance(sandbox, LocalSandbox)
    assert "unconfined" in notice and "could not be run" in notice


def test_detect_bwrap_refuses_to_run_unconfined(git_repo: Path) -> None:
    with pytest.raises(SandboxUnavailableError, match=r"cannot start.*'auto'"):
        detect_sandbox("bwrap", False, project_root=git_repo,
                       bwrap=str(git_repo / "no-such-bwrap"))


def test_detect_rejects_an_unknown_setting(git_repo: Path) -> None:
    with pytest.raises(SandboxError, match="unknown sandbox setting 'docker'"):
        detect_sandbox("docker", False, project_root=git_repo)


@needs_bwrap
def test_detect_auto_picks_bwrap_when_it_works(git_repo: Path) -> None:
    sandbox, notice = detect_sandbox("auto", False, project_root=git_repo)
    assert isinstance(sandbox, BubblewrapSandbox) and sandbox.confined
    assert "network off" in notice


@needs_bwrap
async def test_bwrap_writes_inside_succeed_and_outside_fail(
    git_repo: Path, outside: Path, scratch: Path
) -> None:
    sandbox = confined(git_repo, scratch)
    inside = await sandbox.exec(f"echo ok > made.txt && echo tmp > {scratch}/t", timeout=20)
    assert inside.returncode == 0, inside.output
    assert (git_repo / "made.txt").read_text() == "ok\n"
    # The temp dir is the session's own: kept for its next command, not the host's.
    assert not (scratch / "t").exists()
    again = await sandbox.exec(f"cat {scratch}/t", timeout=20)
    assert again.output == "tmp\n"

    blocked = await sandbox.exec(f"echo bad > {outside}/x.txt", timeout=20)
    assert blocked.returncode != 0
    # `outside` is under the host's /tmp, which the sandbox replaces with its own.
    assert "No such file or directory" in blocked.output
    elsewhere = await sandbox.exec("echo bad > /usr/aistack-x.txt", timeout=20)
    assert "Read-only file system" in elsewhere.output
    assert not (outside / "x.txt").exists()


@needs_bwrap
async def test_bwrap_network_is_off_unless_allowed(git_repo: Path, listener: int) -> None:
    local = await LocalSandbox([git_repo]).exec(CONNECT.format(port=listener), timeout=20)
    assert "connected" in local.output  # the server is reachable outside the sandbox

    offline, _ = detect_sandbox("bwrap", False, project_root=git_repo)
    result = await offline.exec(CONNECT.format(port=listener), timeout=20)
    assert result.returncode != 0 and "connected" not in result.output

    online, notice = detect_sandbox("bwrap", True, project_root=git_repo)
    assert "network on" in notice
    allowed = await online.exec(CONNECT.format(port=listener), timeout=20)
    assert "connected" in allowed.output, allowed.output


@needs_bwrap
async def test_bash_tool_runs_inside_the_sandbox_from_services(
    git_repo: Path, outside: Path, scratch: Path, aistack_home: Path
) -> None:
    sandbox = confined(git_repo, scratch)
    ctx = ToolContext(project_root=git_repo, cwd=git_repo, home=aistack_home,
                      services=ToolServices(sandbox=sandbox))
    tool = BashTool()

    ok = await tool.run(BashArgs(command="mkdir -p sub && cd sub && echo hi > f"), ctx)
    assert not ok.is_error and (git_repo / "sub" / "f").read_text() == "hi\n"
    assert ctx.bash_cwd == git_repo / "sub"  # the cwd still carries over between calls

    denied = await tool.run(BashArgs(command=f"touch {outside}/nope"), ctx)
    # `outside` is under the host's /tmp, which the sandbox replaces with its own.
    assert "No such file or directory" in str(denied.content)
    assert not (outside / "nope").exists()


async def test_bash_tool_without_a_sandbox_is_unchanged(git_repo: Path, outside: Path,
                                                       aistack_home: Path) -> None:
    ctx = ToolContext(project_root=git_repo, cwd=git_repo, home=aistack_home)
    out = await BashTool().run(BashArgs(command=f"touch {outside}/yes"), ctx)
    assert not out.is_error
    assert (outside / "yes").exists()
