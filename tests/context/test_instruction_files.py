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
