"""The per-message `<context>` block is sent only when it carries something the message
names: a greeting in a one-file repository no longer gets the file quoted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aistack_tui.context.injection import names_anything
from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.helpers import run_aistack

BLOCK = """# Code knowledge

## Repository map (most relevant files and definitions)
calc.py:
  1: def add_numbers(a, b)

## Code relevant to the request
calc.py:1-2 (add_numbers)
```python
def add_numbers(a, b):
    return a + b
```"""


@pytest.mark.parametrize(
    ("message", "relevant"),
    [
        ("hi", False),
        ("say hi", False),
        ("thanks, that is all", False),
        ("which files are relevant to the code map?", False),  # the block's own headings
        ("what does add_numbers return?", True),
        ("rename addNumbers", True),  # sub-words of the identifier
        ("fix the numbers", True),
        ("look at calc.py", True),
        ("who calls the adding code?", True),  # an inflection: `add`
        ("where are totals of numbers added?", True),
        ("thanks, that helped", False),
    ],
)
def test_block_is_relevant_only_when_the_message_names_something_in_it(
    message: str, relevant: bool
) -> None:
    mentioned = ["calc.py"] if "calc.py" in message else []
    assert names_anything(BLOCK, message, mentioned) is relevant


def test_empty_block_is_never_relevant() -> None:
    assert not names_anything("", "add_numbers", [])


@pytest.mark.slow
def test_one_file_repository_is_not_quoted_to_a_greeting(git_repo: Path,
                                                         aistack_home: Path) -> None:
    (git_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n")
    with FakeLLMServer([Turn(text="hello"), Turn(text="it adds")]) as server:
        env = server.env("anthropic")
        for prompt in ("hi", "what does add return?"):
            proc = run_aistack(["-p", prompt, "--model", "anthropic/claude-sonnet-4-6"],
                               cwd=git_repo, env=env)
            assert proc.returncode == 0, proc.stderr
        greeting, question = (json.dumps(r.body["messages"]) for r in server.model_requests)
    assert "<context>" not in greeting
    assert "calc.py" not in greeting
    assert "<context>" in question
    assert "def add(a, b)" in question


def test_a_question_in_other_inflections_than_the_code_still_gets_it() -> None:
    """The search behind the block stems ("requests" finds `handle_request`); the check
    did not, so the block was dropped for exactly the questions it answered."""
    block = "# Code knowledge\n\nserver.py:3-4 (handle_request)\ndef handle_request(req):\n"
    assert names_anything(block, "how are requests handled?", [])
    assert names_anything(block, "where is the handling of a request?", [])
    assert not names_anything(block, "say hello", [])
