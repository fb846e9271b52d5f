"""Assemble the system prompt: built-in prompt, environment, project instructions, skills.

The result is stable for a whole session (it is what Anthropic's prompt cache keys on),
so everything that changes per turn (memory, code knowledge) is injected elsewhere.
"""

from __future__ import annotations

import datetime as _dt
import platform
from dataclasses import dataclass
from pathlib import Path

PROMPTS_DIR = Path(__file__).parent / "prompts"
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
MAX_INSTRUCTION_BYTES = 40_000


@dataclass(frozen=True, slots=True)
class InstructionFile:
    path: Path
    text: str


def builtin_prompt() -> str:
    return (PROMPTS_DIR / "system.md").read_text(encoding="utf-8").strip()


def find_instruction_files(project_root: Path, cwd: Path, home: Path) -> list[InstructionFile]:
    """AGENTS.md / CLAUDE.md / GEMINI.md from the project root down to cwd, user's first."""
    found: list[InstructionFile] = []
    user_file = home / "AGENTS.md"
    candidates: list[Path] = [user_file]
    root = project_root.resolve()
    here = cwd.resolve()
    dirs = [root]
    if here != root and here.is_relative_to(root):
        for part in here.relative_to(root).parts:
            dirs.append(dirs[-1] / part)
    for directory in dirs:
        candidates.extend(directory / name for name in INSTRUCTION_FILES)
    seen: set[Path] = set()
    for path in candidates:
        try:
            resolved = path.resolve()
            if resolved in seen or not path.is_file():
                continue
            seen.add(resolved)
            data = path.read_bytes()[:MAX_INSTRUCTION_BYTES]
        except OSError:
            continue
        text = data.decode("utf-8", errors="replace").strip()
        if text:
            found.append(InstructionFile(path, text))
    return found


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
) -> str:
    """The whole system prompt. `override` replaces the built-in part (--system-prompt)."""
    parts = [override.strip() if override else builtin_prompt()]
    parts.append(
        environment_block(project_root, cwd, is_git=(project_root / ".git").exists())
    )
    for item in find_instruction_files(project_root, cwd, home):
        parts.append(
            f'<project_instructions source="{item.path}">\n{item.text}\n</project_instructions>'
        )
    if skills_catalogue:
        parts.append(skills_catalogue)
    if append:
        parts.append(append.strip())
    return "\n\n".join(parts)
