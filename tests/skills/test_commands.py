"""Custom slash commands: discovery in Claude Code's and aistack's folders, front matter,
argument expansion, and the problems a broken file reports instead of stopping anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack_tui.skills.commands import CommandSet, expand, load_command


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    project, home, user = tmp_path / "proj", tmp_path / "ahome", tmp_path / "user"
    for d in (project, home, user):
        d.mkdir()
    return project, home, user


def test_commands_from_every_folder_later_ones_win(roots: tuple[Path, Path, Path]) -> None:
    project, home, user = roots
    write(user / ".claude" / "commands" / "review.md", "User review of $ARGUMENTS\n")
    write(user / ".claude" / "commands" / "standup.md", "Write my standup.\n")
    write(home / "commands" / "fixlint.md", "Fix lint.\n")
    write(project / ".claude" / "commands" / "review.md", "Project review of $ARGUMENTS\n")
    write(project / ".claude" / "commands" / "deploy.md", "Deploy from claude\n")
    write(project / ".aistack" / "commands" / "deploy.md", "Deploy from aistack\n")
    found = CommandSet.discover(project, home, user)
    assert found.names() == ["deploy", "fixlint", "review", "standup"]
    assert found.problems == []
    review, deploy = found.get("review"), found.get("deploy")
    assert review is not None and deploy is not None
    assert review.expand("the parser") == "Project review of the parser"
    assert review.source == "project .claude" and review.is_project
    assert deploy.body == "Deploy from aistack"
    standup = found.get("standup")
    assert standup is not None and not standup.is_project


def test_front_matter_fields(roots: tuple[Path, Path, Path]) -> None:
    project, home, user = roots
    write(project / ".claude" / "commands" / "commit.md", (
        "---\n"
        "description: Create a git commit\n"
        "argument-hint: [message]\n"
        "allowed-tools: Bash(git add:*), Bash(git status:*), Edit(/src/**)\n"
        "model: claude-haiku-4-5\n"
        "---\n"
        "Commit with message: $ARGUMENTS\n"))
    command = CommandSet.discover(project, home, user).get("commit")
    assert command is not None
    assert command.description == "Create a git commit"
    assert command.argument_hint == "[message]"
    # Claude Code's rule forms, anchored as Claude Code anchors them.
    assert command.allowed_tools == ("Bash(git add:*)", "Bash(git status:*)", "Edit(./src/**)")
    assert command.model == "claude-haiku-4-5"
    assert command.body == "Commit with message: $ARGUMENTS"


def test_description_defaults_to_the_first_line_and_subfolders_namespace(
    roots: tuple[Path, Path, Path]
) -> None:
    project, home, user = roots
    write(project / ".claude" / "commands" / "frontend" / "component.md",
          "\n# Make a React component named $1\n\nUse hooks.\n")
    command = CommandSet.discover(project, home, user).get("component")
    assert command is not None
    assert command.description == "Make a React component named $1 (project:frontend)"


@pytest.mark.parametrize(("body", "arguments", "expected"), [
    ("Fix issue #$ARGUMENTS now", "123", "Fix issue #123 now"),
    ("Review PR #$1 with priority $2 by $3.", '456 high "Ada Lovelace"',
     "Review PR #456 with priority high by Ada Lovelace."),
    ("Only $1 and $4", "a b", "Only a and "),
    ("No placeholder.", "some args", "No placeholder.\n\nARGUMENTS: some args"),
    ("No placeholder.", "  ", "No placeholder."),
    ("All: $ARGUMENTS / first: $1", "$1 x", "All: $1 x / first: $1"),  # no re-expansion
    ("Quote $1", "'unclosed word", "Quote 'unclosed"),
])
def test_argument_expansion(body: str, arguments: str, expected: str) -> None:
    assert expand(body, arguments) == expected


def test_broken_files_are_reported_and_skipped(roots: tuple[Path, Path, Path]) -> None:
    project, home, user = roots
    folder = project / ".aistack" / "commands"
    write(folder / "empty.md", "---\ndescription: nothing\n---\n\n")
    write(folder / "unclosed.md", "---\ndescription: never closed\nbody\n")
    write(folder / "bad name.md", "body\n")
    write(folder / "ok.md", "---\nallowed-tools: Bash(git log:*), NoSuchTool\n---\nfine\n")
    write(folder / "a" / "ok.md", "a second /ok in a subfolder\n")
    found = CommandSet.discover(project, home, user)
    assert found.names() == ["ok"]
    ok = found.get("ok")
    assert ok is not None and ok.allowed_tools == ("Bash(git log:*)",)
    problems = "\n".join(found.problems)
    assert "empty.md: the command has no prompt text" in problems
    assert "unclosed.md:1: the front matter has no closing '---' line" in problems
    assert "'bad name' is not a command name" in problems
    assert "NoSuchTool" in problems and "the command still loads" in problems
    assert "/ok is already defined" in problems


def test_built_in_names_win_and_untrusted_allowed_tools_are_withheld(
    roots: tuple[Path, Path, Path]
) -> None:
    project, home, user = roots
    write(project / ".claude" / "commands" / "help.md", "my help\n")
    write(project / ".claude" / "commands" / "ship.md",
          "---\nallowed-tools: Bash(git push:*)\n---\nShip it.\n")
    write(user / ".claude" / "commands" / "mine.md",
          "---\nallowed-tools: Bash(make:*)\n---\nMine.\n")
    found = CommandSet.discover(project, home, user).without(["help", "model"])
    assert found.names() == ["mine", "ship"]
    assert any("/help is a built-in command" in p for p in found.problems)
    found.withhold_allowed_tools(["ship", "mine"])
    ship, mine = found.get("ship"), found.get("mine")
    assert ship is not None and ship.allowed_tools == ()
    assert mine is not None and mine.allowed_tools == ("Bash(make:*)",)  # the user's own


def test_front_matter_yaml_cannot_read_is_read_as_claude_code_reads_it(tmp_path: Path) -> None:
    path = write(tmp_path / "pr.md", (
        "---\n"
        "argument-hint: [pr-number] [priority] [assignee]\n"
        'description: "Review a pull request"\n'
        "allowed-tools: Bash(gh pr view:*)\n"
        "---\n"
        "Review PR #$1 with priority $2 and assign to $3.\n"))
    command = load_command(path, "project .claude")
    assert command.argument_hint == "[pr-number] [priority] [assignee]"
    assert command.description == "Review a pull request"
    assert command.allowed_tools == ("Bash(gh pr view:*)",)


def test_a_file_without_front_matter_keeps_dashes_in_its_body(tmp_path: Path) -> None:
    path = write(tmp_path / "sep.md", "Intro\n---\nmore\n")
    command = load_command(path, "user")
    assert command.body == "Intro\n---\nmore" and command.description == "Intro"
