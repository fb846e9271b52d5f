"""The welcome header at the top of the conversation: which project, on which git branch,
with which model — what a user checks before typing the first prompt.

It sits above the conversation's entries and scrolls away with them (it is no entry of
the transcript, so `/clear`, resume and windowing leave it alone). The model is filled in
once the session has resolved it; until then the header says it is starting.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from aistack_tui import __version__


def git_branch(root: Path) -> str | None:
    """The checked-out branch of the repository holding `root` (a short commit id when
    detached), read from `.git/HEAD` without starting git; None outside a repository."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
                text = dot_git.read_text(encoding="utf-8").strip()
                if not text.startswith("gitdir:"):
                    return None
                git_dir = folder / text.removeprefix("gitdir:").strip()
            elif dot_git.is_dir():
                git_dir = dot_git
            else:
                continue
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if head.startswith("ref: "):
            return head.removeprefix("ref: ").removeprefix("refs/heads/")
        return f"{head[:8]} (detached)" if head else None
    return None


def display_path(path: Path) -> str:
    """`path` with the home directory written as `~`."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


class WelcomeHeader(Static):
    """`aistack 0.1.0`, the project path and branch, and the model."""

    def __init__(self, project: Path, *, id: str | None = None) -> None:
        super().__init__("", id=id, classes="welcome")
        self.project = project
        self.branch = git_branch(project)
        self.model = ""

    def on_mount(self) -> None:
        self._show()

    def set_model(self, model: str) -> None:
        self.model = model
        self._show()

    def _show(self) -> None:
        text = Text()
        text.append("aistack", style="bold")
        text.append(f" {__version__}\n", style="dim")
        text.append(display_path(self.project), style="bold")
        if self.branch:
            text.append("  ⎇ ", style="dim")
            text.append(self.branch)
        text.append("\n")
        text.append("model ", style="dim")
        text.append(self.model or "starting…", style="bold" if self.model else "dim")
        text.append("   /help for commands", style="dim")
        self.update(text)
