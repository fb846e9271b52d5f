"""Assemble the system prompt: built-in prompt, environment, project instructions, skills.

The result is stable for a whole session (it is what Anthropic's prompt cache keys on),
so everything that changes per turn (memory, code knowledge) is injected elsewhere.
"""

from __future__ import annotations

import datetime as _dt
import platform
from dataclasses import dataclass
from pathlib import Path

from aistack_tui.beneath import UnsafePath, locate_path, real_dir

PROMPTS_DIR = Path(__file__).parent / "prompts"
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
MAX_INSTRUCTION_BYTES = 40_000


@dataclass(frozen=True, slots=True)
class InstructionFile:
    path: Path
    text: str


def builtin_prompt() -> str:
    return (PROMPTS_DIR / "system.md").read_text(encoding="utf-8").strip()


def find_instruction_files(
    project_root: Path, cwd: Path, home: Path, warnings: list[str] | None = None
) -> list[InstructionFile]:
    """AGENTS.md / CLAUDE.md / GEMINI.md from the project root down to cwd, user's first.

    A committed instruction file is untrusted input that goes into every request, in every
    mode, with no tool call: `CLAUDE.md -> /proc/self/environ` would send the API key. So
    each is read beneath its own root (the project's beneath the project, the user's
    beneath `home`), following only links that stay inside, regular files only; one that
    leaves is skipped and a warning saying why is appended to `warnings`.
    """
    found: list[InstructionFile] = []
    root = real_dir(project_root)
    here = real_dir(cwd)
    user_root = real_dir(home)
    candidates: list[tuple[Path, Path]] = [(user_root / "AGENTS.md", user_root)]
    dirs = [root]
    if here != root and here.is_relative_to(root):
        for part in here.relative_to(root).parts:
            dirs.append(dirs[-1] / part)
    for directory in dirs:
        candidates.extend((directory / name, root) for name in INSTRUCTION_FILES)
    seen: set[Path] = set()
    for path, base in candidates:
        try:
            with locate_path(path, [base]) as file:
                if file.kind in ("missing", "dir") or file.path in seen:
                    continue
                seen.add(file.path)
                data = file.read(MAX_INSTRUCTION_BYTES)
        except UnsafePath as e:
            if warnings is not None:
                warnings.append(
                    f"{path} was not loaded as instructions: {e}. Instruction files are "
                    f"read only as regular files beneath {base}."
                )
            continue
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
    warnings: list[str] | None = None,
) -> str:
    """The whole system prompt. `override` replaces the built-in part (--system-prompt);
    instruction files that were refused are reported in `warnings`."""
    parts = [override.strip() if override else builtin_prompt()]
    parts.append(
        environment_block(project_root, cwd, is_git=(project_root / ".git").exists())
    )
    for item in find_instruction_files(project_root, cwd, home, warnings):
        parts.append(
            f'<project_instructions source="{item.path}">\n{item.text}\n</project_instructions>'
        )
    if skills_catalogue:
        parts.append(skills_catalogue)
    if append:
        parts.append(append.strip())
    return "\n\n".join(parts)
