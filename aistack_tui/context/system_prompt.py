"""Assemble the system prompt: built-in prompt, environment, project instructions, skills.

The result is stable for a whole session (it is what Anthropic's prompt cache keys on),
so everything that changes per turn (memory, code knowledge) is injected elsewhere.
"""

from __future__ import annotations

import datetime as _dt
import platform
from pathlib import Path

from aistack_tui.context.instructions import (
    InstructionFile,
    find_identity_files,
    find_instruction_files,
)

__all__ = ["InstructionFile", "build_system_prompt", "find_instruction_files"]

PROMPTS_DIR = Path(__file__).parent / "prompts"


def builtin_prompt() -> str:
    return (PROMPTS_DIR / "system.md").read_text(encoding="utf-8").strip()


def environment_block(project_root: Path, cwd: Path, *, is_git: bool) -> str:
    today = _dt.date.today().isoformat()
    return (
        "<env>\n"
        f"Working directory: {cwd}\n"
        f"Project root: {project_root}\n"
        f"Is a git repository: {'yes' if is_git else 'no'}\n"
        f"Platform: {platform.system().lower()}\n"
        f"Today's date: {today}\n"
        "</env>"
    )


def build_system_prompt(
    *,
    project_root: Path,
    cwd: Path,
    home: Path,
    override: str | None = None,
    append: str | None = None,
    skills_catalogue: str = "",
    warnings: list[str] | None = None,
    user_home: Path | None = None,
    project_identity: bool = False,
) -> str:
    """The whole system prompt. `override` replaces the built-in part (--system-prompt);
    instruction files that were refused are reported in `warnings`. Identity files come
    from aistack's `home`, and from the project only when `project_identity` (trusted)."""
    parts = [override.strip() if override else builtin_prompt()]
    for item in find_identity_files(home, project_root, project=project_identity,
                                    warnings=warnings):
        parts.append(f'<identity source="{item.path}">\n{item.text}\n</identity>')
    parts.append(
        environment_block(project_root, cwd, is_git=(project_root / ".git").exists())
    )
    for item in find_instruction_files(project_root, cwd, home, warnings, user_home=user_home):
        parts.append(
            f'<project_instructions source="{item.path}">\n{item.text}\n</project_instructions>'
        )
    if skills_catalogue:
        parts.append(skills_catalogue)
    if append:
        parts.append(append.strip())
    return "\n\n".join(parts)
