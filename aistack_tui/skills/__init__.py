"""Skills: SKILL.md discovery, catalogue and loading."""

from aistack_tui.skills.registry import (
    Skill,
    SkillError,
    SkillRegistry,
    bundled_skills_dir,
    catalogue_text,
    discover,
    load_skill,
    skill_locations,
)

__all__ = [
    "Skill",
    "SkillError",
    "SkillRegistry",
    "bundled_skills_dir",
    "catalogue_text",
    "discover",
    "load_skill",
    "skill_locations",
]
