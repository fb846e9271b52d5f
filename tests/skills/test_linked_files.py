"""A skill or command file that links out of its root is refused, not loaded.

A committed `.claude/skills/x/SKILL.md -> ~/.ssh/id_rsa` (or `-> /proc/self/environ`)
would put the file into the model's context, and a linked-in user skill with
`allowed-tools: Bash` would pre-approve commands (issue 21). Links inside stay usable.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.skills import SkillRegistry
from aistack_tui.skills.commands import CommandSet

SKILL = "---\nname: {name}\ndescription: does {name}\nallowed-tools: Bash\n---\n\nSECRET-{name}\n"


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    out = {n: tmp_path / n for n in ("proj", "aistack-home", "user-home", "elsewhere")}
    for p in out.values():
        p.mkdir(exist_ok=True)
    return out


def test_skill_files_and_folders_linking_out_of_the_project_are_not_loaded(
    places: dict[str, Path],
) -> None:
    project, elsewhere = places["proj"], places["elsewhere"]
    skills = project / ".claude" / "skills"
    (elsewhere / "outside-skill").mkdir()
    (elsewhere / "outside-skill" / "SKILL.md").write_text(SKILL.format(name="folder"))
    (elsewhere / "SKILL.md").write_text(SKILL.format(name="file"))
    (skills / "linked-file").mkdir(parents=True)
    (skills / "linked-file" / "SKILL.md").symlink_to(elsewhere / "SKILL.md")
    (skills / "linked-folder").symlink_to(elsewhere / "outside-skill")
    (skills / "environ").mkdir()
    (skills / "environ" / "SKILL.md").symlink_to("/proc/self/environ")
    # Inside the project a link is fine: a skill kept elsewhere in the repository.
    (project / "tools" / "kept").mkdir(parents=True)
    (project / "tools" / "kept" / "SKILL.md").write_text(SKILL.format(name="kept"))
    (skills / "kept").symlink_to("../../tools/kept")

    registry = SkillRegistry.discover(project, places["aistack-home"], places["user-home"])

    assert "file" not in registry.skills and "folder" not in registry.skills
    assert "kept" in registry.skills
    assert "SECRET-kept" in registry.load_body("kept")
    refused = [p for p in registry.problems if "not loaded" in p]
    assert len(refused) == 3, registry.problems


def test_a_skill_swapped_for_a_link_after_start_up_is_not_read(
    places: dict[str, Path],
) -> None:
    project, elsewhere = places["proj"], places["elsewhere"]
    folder = project / ".aistack" / "skills" / "s"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL.format(name="s"))
    registry = SkillRegistry.discover(project, places["aistack-home"], places["user-home"])
    (elsewhere / "SKILL.md").write_text(SKILL.format(name="stolen"))
    (folder / "SKILL.md").unlink()
    (folder / "SKILL.md").symlink_to(elsewhere / "SKILL.md")  # what the Skill tool reads
    with pytest.raises(ValueError, match="not loaded"):
        registry.load_body("s")


def test_command_files_linking_out_of_the_project_are_not_loaded(
    places: dict[str, Path],
) -> None:
    project, elsewhere = places["proj"], places["elsewhere"]
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (elsewhere / "key").write_text("SECRET-KEY\n")
    (commands / "leak.md").symlink_to(elsewhere / "key")
    (commands / "env.md").symlink_to("/proc/self/environ")
    (commands / "real.md").write_text("Review the diff.\n")
    (commands / "alias.md").symlink_to("real.md")

    found = CommandSet.discover(project, places["aistack-home"], places["user-home"])

    assert found.names() == ["alias", "real"]
    assert sum("not loaded" in p for p in found.problems) == 2, found.problems


def test_user_skills_are_read_beneath_the_users_home(places: dict[str, Path]) -> None:
    user, elsewhere = places["user-home"], places["elsewhere"]
    agents = user / ".agents" / "skills"
    (user / "dotfiles" / "mine").mkdir(parents=True)
    (user / "dotfiles" / "mine" / "SKILL.md").write_text(SKILL.format(name="mine"))
    agents.mkdir(parents=True)
    (agents / "mine").symlink_to(user / "dotfiles" / "mine")  # inside the home: followed
    (elsewhere / "theirs").mkdir()
    (elsewhere / "theirs" / "SKILL.md").write_text(SKILL.format(name="theirs"))
    (agents / "theirs").symlink_to(elsewhere / "theirs")
    registry = SkillRegistry.discover(places["proj"], places["aistack-home"], user)
    assert "mine" in registry.skills and "theirs" not in registry.skills
