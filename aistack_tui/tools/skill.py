"""Skill: load a skill's instructions (phase two of skill loading).

Only names and descriptions of skills sit in the system prompt; this tool returns the
body of one SKILL.md (front matter stripped) and the absolute paths of the skill's other
files, which the model reads with Read when the instructions say so. It finds the
session's SkillRegistry in `ctx.services.skills`, so the tools layer does not import
the skills layer, and marks the skill active so its `allowed-tools` are pre-approved.
It acts only inside the agent, so it never needs permission (docs/permissions.md, "Modes").
"""

from __future__ import annotations

from pydantic import Field

from aistack_tui.tools.base import (
    Tool,
    ToolArgs,
    ToolCallDisplay,
    ToolContext,
    ToolError,
    ToolOutput,
)
from aistack_tui.tools.schema import CompactSpec


class SkillArgs(ToolArgs):
    name: str = Field(min_length=1, description="The skill's name as listed")


class SkillTool(CompactSpec, Tool[SkillArgs]):
    name = "Skill"
    args_model = SkillArgs
    read_only = True
    needs_permission = False

    def path_argument(self, args: SkillArgs) -> str | None:
        return None

    def describe(self, args: SkillArgs) -> ToolCallDisplay:
        return ToolCallDisplay(summary=f"Skill {args.name}")

    async def run(self, args: SkillArgs, ctx: ToolContext) -> ToolOutput:
        registry = ctx.services.skills
        if registry is None:
            raise ToolError("No skills are available in this session.")
        name = args.name.strip()
        if registry.get(name) is None:
            known = ", ".join(registry.names()) or "none"
            raise ToolError(f"No skill named {name!r}. Available skills: {known}.")
        try:
            body: str = registry.load_body(name)
            files = registry.files(name)
        except ValueError as e:  # SkillError: the file changed or vanished since start-up
            raise ToolError(str(e)) from e
        skill = registry.activate(name)
        parts = [
            f'<skill name="{name}" path="{skill.path}">',
            body,
            "</skill>",
            f"Skill directory: {skill.directory}",
        ]
        if files:
            parts.append(
                "Other files in this skill (read them with Read when the instructions "
                "call for them):"
            )
            parts += [f"- {path}" for path in files]
        else:
            parts.append("This skill has no other files.")
        if skill.allowed_tools:
            parts.append(
                "Pre-approved while this skill is active: " + ", ".join(skill.allowed_tools)
            )
        return ToolOutput(
            "\n".join(parts),
            display=ToolCallDisplay(
                summary=f"Skill {name} loaded"
                + (f" ({len(files)} other file{'s' if len(files) != 1 else ''})" if files
                   else ""),
                detail=body[:2000],
            ),
            metadata={"skill": name, "allowed_tools": list(skill.allowed_tools)},
        )
