"""Instruction files are read beneath their own root: the project's, or the user's."""

from __future__ import annotations

from pathlib import Path

from aistack_tui.context.system_prompt import find_instruction_files


def test_user_and_project_instruction_links_leaving_their_root_are_refused(
    tmp_path: Path,
) -> None:
    project, home, elsewhere = tmp_path / "proj", tmp_path / "aistack-home", tmp_path / "else"
    for d in (project / "sub", home, elsewhere):
        d.mkdir(parents=True, exist_ok=True)
    (elsewhere / "secret").write_text("SECRET\n")
    (home / "AGENTS.md").symlink_to(elsewhere / "secret")
    (project / "sub" / "CLAUDE.md").symlink_to("../../else/secret")
    (project / "AGENTS.md").write_text("PROJECT\n")
    (project / "sub" / "AGENTS.md").symlink_to("../AGENTS.md")  # the same file: once
    warnings: list[str] = []
    found = find_instruction_files(project, project / "sub", home, warnings)
    assert [f.text for f in found] == ["PROJECT"]
    assert len(warnings) == 2
    assert all("was not loaded" in w for w in warnings)
    assert any(str(home) in w for w in warnings)


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    project, home, user = tmp_path / "proj", tmp_path / "aistack-home", tmp_path / "user"
    for d in (project / "docs", home, user / ".claude"):
        d.mkdir(parents=True, exist_ok=True)
    return project, home, user


def test_claude_md_imports_are_followed_beneath_their_roots(tmp_path: Path) -> None:
    project, home, user = _tree(tmp_path)
    (tmp_path / "outside.md").write_text("OUTSIDE-SECRET\n")
    (project / "CLAUDE.md").write_text(
        "See @docs/style.md and @README for details; ask @alice.\n"
        "Not this one: `@docs/ignored.md`.\n```\n@docs/ignored.md\n```\n"
        "Nor @../outside.md.\n")
    (project / "README").write_text("README-TEXT\n")
    (project / "docs" / "style.md").write_text("STYLE-TEXT, and @deeper.md\n")
    (project / "docs" / "deeper.md").write_text("DEEPER-TEXT @style.md\n")  # a cycle: once
    (project / "docs" / "ignored.md").write_text("IGNORED-TEXT\n")
    (user / ".claude" / "CLAUDE.md").write_text("USER-MEMORY @~/prefs.md\n")
    (user / "prefs.md").write_text("USER-PREFS\n")
    (project / "CLAUDE.local.md").write_text("LOCAL-NOTES\n")
    warnings: list[str] = []
    found = find_instruction_files(project, project, home, warnings, user_home=user)
    texts = [f.text.split()[0].rstrip(",") for f in found]
    assert texts == ["USER-MEMORY", "USER-PREFS", "See", "STYLE-TEXT", "DEEPER-TEXT",
                     "README-TEXT", "LOCAL-NOTES"]
    assert [f.kind for f in found][:3] == ["instructions", "import", "instructions"]
    assert "OUTSIDE-SECRET" not in str(found) and "IGNORED-TEXT" not in str(found)
    assert any("@../outside.md was not imported" in w for w in warnings)


def test_imports_stop_after_five_hops(tmp_path: Path) -> None:
    project, home, _user = _tree(tmp_path)
    (project / "CLAUDE.md").write_text("@f1.md\n")
    for i in range(1, 8):
        (project / f"f{i}.md").write_text(f"F{i} @f{i + 1}.md\n")
    found = find_instruction_files(project, project, home)
    assert [f.text.split()[0] for f in found] == ["@f1.md", "F1", "F2", "F3", "F4", "F5"]


def test_identity_files_from_aistack_home_and_a_trusted_project(tmp_path: Path) -> None:
    from aistack_tui.context.system_prompt import build_system_prompt

    project, home, user = _tree(tmp_path)
    (home / "SOUL.md").write_text("Be terse.\n")
    (home / "memory").mkdir()
    (home / "memory" / "MEMORY.md").write_text("The user deploys on Fridays.\n")
    (project / ".aistack").mkdir()
    (project / ".aistack" / "IDENTITY.md").write_text("You are PROJECT-BOT.\n")
    untrusted = build_system_prompt(project_root=project, cwd=project, home=home,
                                    user_home=user)
    assert "Be terse." in untrusted and "deploys on Fridays" in untrusted
    assert "PROJECT-BOT" not in untrusted
    trusted = build_system_prompt(project_root=project, cwd=project, home=home,
                                  user_home=user, project_identity=True)
    assert "PROJECT-BOT" in trusted
    assert trusted.index("Be terse.") < trusted.index("<env>")  # before the instructions
