"""The kernel under the engine: what an allowed command can still not do in the sandbox.

Each test runs real commands through the Bash tool inside real bubblewrap, with the
masks and frozen paths the session builds from the permission engine's rules. A parser
mistake is played by the grant the call runs with: the read-only tier is what the engine
gives a command it judged read-only, so a "read-only" command that writes, connects or
reads a denied file must fail there and leave the file system as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.permissions.types import APPROVED_GRANT, READ_ONLY_GRANT, ExecGrant
from aistack_tui.tools.base import ToolContext
from tests.sandbox.side_doors import run_in_sandbox, sandboxed_context

from .test_sandbox import CONNECT, needs_bwrap

pytestmark = needs_bwrap


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "private").mkdir()
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".env").write_text("API_KEY=sk-live-123\n")
    (root / "private" / "notes.txt").write_text("TOP-SECRET-NOTE\n")
    (root / "locked.cfg").write_text("locked\n")
    return root.resolve()


def _tool_context(project: Path, home: Path, deny: list[str]) -> ToolContext:
    return sandboxed_context(project, home, deny)


async def _run(ctx: ToolContext, command: str, grant: ExecGrant) -> str:
    return await run_in_sandbox(ctx, command, grant)


@pytest.fixture
def ctx(project: Path, tmp_path: Path) -> ToolContext:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY\n")
    (home / ".bashrc").write_text("# rc\n")
    return _tool_context(project, home, ["Read(./private/**)", "Edit(./locked.cfg)"])


async def test_read_only_tier_cannot_write_anywhere(ctx: ToolContext, project: Path) -> None:
    out = await _run(ctx, "echo pwned > src/app.py; touch M; echo x >> .git/config", READ_ONLY_GRANT)
    assert "Read-only file system" in out
    assert (project / "src" / "app.py").read_text() == "print('hi')\n"
    assert not (project / "M").exists()
    assert (project / ".git" / "config").read_text() == "[core]\n"


async def test_the_session_has_its_own_tmp_in_both_tiers(ctx: ToolContext, tmp_path: Path) -> None:
    marker = Path("/tmp") / f"aistack-private-tmp-{tmp_path.name}"
    wrote = await _run(ctx, f"echo built > {marker} && cat {marker}", APPROVED_GRANT)
    assert wrote.strip() == "built"  # scratch space works inside...
    assert not marker.exists()  # ...and is not the host's
    read = await _run(ctx, f"cat {marker}; echo x > {marker}.2", READ_ONLY_GRANT)
    assert "built" in read  # kept between the session's commands
    assert "Read-only file system" in read  # the read tier cannot write it


async def test_read_only_tier_masks_denied_paths_and_secrets(ctx: ToolContext) -> None:
    out = await _run(
        ctx, "cat private/notes.txt; cat .env; cat ~/.ssh/id_ed25519; cat src/app.py",
        READ_ONLY_GRANT,
    )
    assert "TOP-SECRET-NOTE" not in out
    assert "API_KEY" not in out
    assert "PRIVATE-KEY" not in out
    assert "print('hi')" in out  # everything else reads normally


async def test_read_only_tier_has_no_network(ctx: ToolContext, listener: int) -> None:
    out = await _run(ctx, CONNECT.format(port=listener), READ_ONLY_GRANT)
    assert "connected" not in out


async def test_approved_tier_writes_the_project_but_not_protected_paths(
    ctx: ToolContext, project: Path
) -> None:
    ok = await _run(ctx, "echo new > src/new.py && cat .env", APPROVED_GRANT)
    assert (project / "src" / "new.py").read_text() == "new\n"
    assert "API_KEY=" in ok  # an approved command reads secrets: the user said yes
    blocked = await _run(
        ctx,
        "echo '[alias] x=!touch P' >> .git/config; echo x > .git/hooks/pre-commit; "
        "echo changed > locked.cfg; cat private/notes.txt",
        APPROVED_GRANT,
    )
    assert blocked.count("Read-only file system") >= 3, blocked
    assert (project / ".git" / "config").read_text() == "[core]\n"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / "locked.cfg").read_text() == "locked\n"
    assert "TOP-SECRET-NOTE" not in blocked  # a deny rule holds for every command


async def test_absent_protected_paths_cannot_be_created(
    ctx: ToolContext, project: Path
) -> None:
    out = await _run(
        ctx,
        "echo '{\"mcpServers\":{}}' > .mcp.json; mkdir -p .claude/commands .agents/skills; "
        "echo 'export X=1' > .envrc; ls -d .mcp.json",
        APPROVED_GRANT,
    )
    assert "Is a directory" in out and "Read-only file system" in out
    for name in (".mcp.json", ".claude", ".agents", ".envrc"):
        assert not (project / name).exists(), name  # the placeholder is gone afterwards
    assert ".mcp.json" in out  # it was there, read-only, while the command ran


async def test_network_only_when_the_grant_allows_it(ctx: ToolContext, listener: int) -> None:
    offline = await _run(ctx, CONNECT.format(port=listener), ExecGrant("write", network=False))
    assert "connected" not in offline
    online = await _run(ctx, CONNECT.format(port=listener), APPROVED_GRANT)
    assert "connected" in online


async def test_read_only_tier_gets_no_credential_variables(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-abc123")
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    read = await _run(ctx, "echo key=$ANTHROPIC_API_KEY; echo $PLAIN_SETTING", READ_ONLY_GRANT)
    assert "sk-ant-abc123" not in read and "key=\n" in read + "\n" and "visible" in read
    approved = await _run(ctx, "echo ${#ANTHROPIC_API_KEY}", APPROVED_GRANT)
    assert approved.strip() == "13"  # a command you approved keeps your environment


async def test_a_deny_rule_inside_a_skipped_directory_is_still_masked(
    project: Path, tmp_path: Path
) -> None:
    vendored = project / "node_modules" / "vendor"
    vendored.mkdir(parents=True)
    (vendored / "token.txt").write_text("VENDORED-TOKEN\n")
    (project / "node_modules" / "other.txt").write_text("fine\n")
    ctx = _tool_context(project, tmp_path / "home", ["Read(./node_modules/vendor/**)"])
    out = await _run(
        ctx, "cat node_modules/vendor/token.txt; cat node_modules/other.txt", READ_ONLY_GRANT
    )
    assert "VENDORED-TOKEN" not in out and "fine" in out
