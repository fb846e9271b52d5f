"""A committed instruction file that links out of the project never reaches the model.

`CLAUDE.md -> /proc/self/environ` put the user's API key into every request, in any
mode, with no tool call (issue 21); `-> ~/.ssh/id_rsa` the same for a key file. Links
that stay inside the project keep working.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.helpers import run_aistack

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"
SECRET_IN_ENV = "FAKE-ENV-SECRET-8c1f"
SECRET_IN_FILE = "FAKE-KEY-FILE-SECRET-51aa"


def test_instruction_links_out_of_the_project_send_no_secret(
    git_repo: Path, tmp_path: Path
) -> None:
    key_file = tmp_path / "user-home" / ".ssh" / "id_rsa"
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key_file.write_text(f"-----BEGIN KEY-----\n{SECRET_IN_FILE}\n")
    (git_repo / "CLAUDE.md").symlink_to(key_file)
    (git_repo / "AGENTS.md").symlink_to("/proc/self/environ")
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "guide.md").write_text("MARKER-GUIDE\n")
    (git_repo / "GEMINI.md").symlink_to("docs/guide.md")  # inside: still read
    with FakeLLMServer([Turn(text="ok")]) as server:
        proc = run_aistack(
            ["-p", "hi", "--model", MODEL], cwd=git_repo,
            env={**server.env("anthropic"), "SOME_TOKEN": SECRET_IN_ENV},
        )
        assert proc.returncode == 0, proc.stderr
        bodies = [json.dumps(r.body) for r in server.requests]
        first = json.dumps(server.model_requests[0].body)
    for body in bodies:
        assert SECRET_IN_ENV not in body
        assert SECRET_IN_FILE not in body
        assert "fake-key" not in body  # the API key itself, as /proc/self/environ holds it
    assert "MARKER-GUIDE" in first
    assert "AGENTS.md was not loaded" in proc.stderr and "CLAUDE.md was not loaded" in proc.stderr
