"""Grep and Glob show no file a Read could not see, and never walk through a symlink."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.permissions.engine import PermissionEngine, request_for_test
from aistack_tui.permissions.rules import RuleLayer
from aistack_tui.tools.base import ToolContext
from aistack_tui.tools.glob import GlobTool
from aistack_tui.tools.grep import GrepTool
from aistack_tui.tools.services import ToolServices


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("before\nneedle public\nafter\n")
    (root / "src" / "odd:name-1-x.py").write_text("needle odd\n")
    (root / "private").mkdir()
    (root / "private" / "p.py").write_text("needle private\n")
    (root / ".env").write_text("KEY=needle-env\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("needle outside\n")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "lf.py").symlink_to(outside / "leak.py")
    return root


def _ctx(root: Path, deny: list[str] | None = None) -> ToolContext:
    ctx = ToolContext(project_root=root, cwd=root, home=root.parent)
    if deny is not None:
        engine = PermissionEngine(
            layers=[RuleLayer("test", deny=deny)], mode="default", project_root=root,
            home=root.parent,
        )
        ctx.services = ToolServices.checked_by(engine)
    return ctx


async def _grep(ctx: ToolContext, **raw: object) -> str:
    tool = GrepTool()
    out = await tool.run(tool.parse_args({"pattern": "needle", **raw}), ctx)
    assert isinstance(out.content, str)
    return out.content


async def _glob(ctx: ToolContext, pattern: str) -> str:
    tool = GlobTool()
    out = await tool.run(tool.parse_args({"pattern": pattern}), ctx)
    assert isinstance(out.content, str)
    return out.content


HIDDEN = ("private", "needle-env", ".env", "outside", "lf.py", "linked")


async def test_grep_content_keeps_format_and_drops_hidden_files(project: Path) -> None:
    ctx = _ctx(project, deny=["Read(./private/**)"])
    text = await _grep(ctx, output_mode="content", **{"-C": 1})
    assert "src/a.py-1-before\nsrc/a.py:2:needle public\nsrc/a.py-3-after" in text
    assert "src/odd:name-1-x.py:1:needle odd" in text
    for word in HIDDEN:
        assert word not in text


@pytest.mark.parametrize("mode", ["files_with_matches", "count"])
async def test_grep_file_modes_drop_hidden_files(project: Path, mode: str) -> None:
    ctx = _ctx(project, deny=["Read(./private/**)"])
    text = await _grep(ctx, output_mode=mode)
    assert "src/a.py" in text
    for word in HIDDEN:
        assert word not in text
    if mode == "count":
        assert "Found 2 matches across 2 files." in text


async def test_grep_glob_argument_cannot_reach_a_denied_file(project: Path) -> None:
    ctx = _ctx(project, deny=["Read(./private/**)"])
    assert await _grep(ctx, glob="private/**", output_mode="content") == "No matches found"
    assert await _grep(ctx, glob=".env*", output_mode="content") == "No matches found"


async def test_glob_drops_hidden_files_and_never_lists_through_symlinks(project: Path) -> None:
    ctx = _ctx(project, deny=["Read(./private/**)"])
    text = await _glob(ctx, "**/*")
    assert str(project / "src" / "a.py") in text
    for word in HIDDEN:
        assert word not in text.replace(str(project), "")


async def test_without_an_engine_secrets_are_still_left_out(project: Path) -> None:
    ctx = _ctx(project)
    text = await _grep(ctx, output_mode="content")
    assert "needle private" in text  # no rules known: only the secrets default applies
    assert "needle-env" not in text
    assert ".env" not in (await _glob(ctx, "**/*")).replace(str(project), "")


async def test_an_approved_search_outside_the_project_shows_its_files_but_not_secrets(
    project: Path,
) -> None:
    """Reading outside asks; once the user approved searching there, its files show (they
    ask for no other reason than the directory did), but secrets and denied files do not."""
    outside = project.parent / "outside"
    (outside / "id_rsa").write_text("needle key\n")
    (outside / "blocked").mkdir()
    (outside / "blocked" / "b.py").write_text("needle blocked\n")
    ctx = _ctx(project, deny=[f"Read({outside}/blocked/**)"])
    text = await _grep(ctx, path=str(outside), output_mode="content")
    assert "needle outside" in text
    assert "needle key" not in text
    assert "needle blocked" not in text
    listing = await GlobTool().run(
        GlobTool().parse_args({"pattern": "**/*", "path": str(outside)}), ctx
    )
    assert str(outside / "leak.py") in str(listing.content)
    assert "id_rsa" not in str(listing.content)
    assert "blocked" not in str(listing.content)


NEW_SECRETS = (
    ".env-production", ".env~", ".envrc", ".pgpass",
    ".config/gcloud/application_default_credentials.json", ".config/gcloud/credentials.db",
    ".config/gcloud/access_tokens.db", ".azure/msal_token_cache.json", ".oci/config",
    ".config/doctl/config.yaml", ".terraform.d/credentials.tfrc.json", ".config/hub",
    ".config/gh/hosts.yml", ".kube/config", ".docker/config.json",
    ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
    ".config/github-copilot/hosts.json", ".aistack/credentials.json",
)


async def test_search_tools_never_show_credentials_files_even_with_home_as_the_project(
    tmp_path: Path,
) -> None:
    """`.env*` as documented, `.pgpass`, cloud command lines' and other agents' logins:
    with the home directory as the project they are "inside the project", and Grep,
    Glob and Read still keep them out."""
    home = tmp_path / "home"
    for rel in NEW_SECRETS:
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"needle-token in {rel}\n")
    (home / "notes.md").write_text("needle-token in notes\n")
    ctx = ToolContext(project_root=home, cwd=home, home=home)
    engine = PermissionEngine(
        layers=[RuleLayer("test")], mode="bypassPermissions", project_root=home, home=home
    )
    ctx.services = ToolServices.checked_by(engine)
    grep = GrepTool()
    out = await grep.run(
        grep.parse_args({"pattern": "needle-token", "output_mode": "content"}), ctx
    )
    assert "in notes" in str(out.content)
    listing = str((await GlobTool().run(GlobTool().parse_args({"pattern": "**/*"}), ctx)).content)
    assert "notes.md" in listing
    for rel in NEW_SECRETS:
        assert f"in {rel}" not in str(out.content), rel
        assert str(home / rel) not in listing, rel
        decision = engine.check(request_for_test({"tool": "Read", "path": str(home / rel)}))
        assert decision.behavior == "ask", (rel, decision.reason)
