"""Skills: SKILL.md discovery, catalogue and loading."""
