"""Shared fixtures: every test gets its own AISTACK_HOME, a temporary git repo as cwd,
and no real provider keys, so nothing a test does can reach a user's files or a real LLM."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests check what the engine decides, not how fast: on two busy cores a first
# example can take longer than hypothesis's 200 ms deadline, which is not a failure.
settings.register_profile("aistack", deadline=None)
settings.load_profile("aistack")

PROVIDER_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "AISTACK_MODEL",
    "AISTACK_PERMISSION_MODE",
    "NO_COLOR",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "aistack-home"
    home.mkdir()
    monkeypatch.setenv("AISTACK_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    (tmp_path / "user-home").mkdir()
    for var in PROVIDER_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("AISTACK_") and var != "AISTACK_HOME":
            monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def aistack_home(isolated_env: Path) -> Path:
    return isolated_env


@pytest.fixture
def git_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository with one commit, made the working directory."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    (repo / "README.md").write_text("# test repo\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=repo, check=True, env=env)
    monkeypatch.chdir(repo)
    return repo
