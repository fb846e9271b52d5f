"""Completion sources, the side-by-side diff parser, slash parsing and prompt history."""

from __future__ import annotations

from pathlib import Path

from aistack_tui.session.input import CommandLine, PromptLine, parse_input
from aistack_tui.session.mentions import (
    FileIndex,
    command_at_start,
    mention_at_end,
    mentioned_paths,
)
from aistack_tui.tui.commands import all_commands
from aistack_tui.tui.slash import code_blocks
from aistack_tui.tui.widgets.prompt_input import PromptHistory


def test_file_index_respects_gitignore_at_every_level(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "src" / "debug.log").write_text("")
    (tmp_path / "src" / ".gitignore").write_text("secret.txt\n")
    (tmp_path / "src" / "secret.txt").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    files = FileIndex(tmp_path).files
    assert "src/app.py" in files and "src/" in files
    assert not any(f.startswith(("build", ".git/")) or f.endswith((".log", "secret.txt"))
                   for f in files)


def test_fuzzy_matches_prefer_the_base_name(tmp_path: Path) -> None:
    for rel in ["src/app.py", "apps/readme.md", "docs/a_p_p.txt", "zzz.py"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    matches = FileIndex(tmp_path).matches("app")
    assert matches[0] == "src/app.py"
    assert "docs/a_p_p.txt" in matches and "zzz.py" not in matches


def test_mention_and_command_tokens() -> None:
    assert mention_at_end("look at @src/ap") == "src/ap"
    assert mention_at_end("mail me@example") is None
    assert mention_at_end("@") == ""
    assert command_at_start("/mo") == "mo"
    assert command_at_start("/model gpt") is None
    assert command_at_start("hello /x") is None


def test_mentioned_paths_only_existing_files_inside_root(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    outside = tmp_path.parent / "outside.txt"
    outside.write_text("no")
    found = mentioned_paths("see @a.py, @missing.py and @../outside.txt", tmp_path)
    assert found == [(tmp_path / "a.py").resolve()]


def test_slash_parsing_and_registry() -> None:
    assert parse_input("/model openai/gpt-4.1") == CommandLine("model", "openai/gpt-4.1")
    assert parse_input("/help") == CommandLine("help", "")
    assert parse_input("not a command") == PromptLine("not a command")
    assert parse_input("//etc/passwd is a path") == PromptLine("/etc/passwd is a path")
    names = [c.name for c in all_commands().all()]
    for required in ["help", "clear", "compact", "model", "cost", "context", "memory",
                     "permissions", "resume", "sessions", "mcp", "skills", "init", "quit"]:
        assert required in names
    assert [c.name for c in all_commands().matches("re")][0] == "resume"


def test_code_blocks_are_extracted_for_copy() -> None:
    answer = "Text\n```python\nprint(1)\n```\nmore\n~~~\nls\n~~~\n"
    assert code_blocks(answer) == ["print(1)", "ls"]


def test_prompt_history_persists_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path)
    history.add("first")
    history.add("multi\nline")
    history.add("multi\nline")  # repeated: kept once
    assert PromptHistory(path).items == ["first", "multi\nline"]
