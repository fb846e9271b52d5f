"""`aistack models` as a user runs it: the real console script against the fake server's
recorded models-endpoint answers, through the real SDKs."""

from __future__ import annotations

import json
from pathlib import Path

from fakes.fake_llm import FakeLLMServer, Turn
from tests.e2e.helpers import run_aistack


def test_lists_each_configured_provider_with_window_price_and_deprecation(
    git_repo: Path, aistack_home: Path
) -> None:
    with FakeLLMServer() as server:
        env = {**server.env("anthropic"), **server.env("openai")}
        proc = run_aistack(["models"], cwd=git_repo, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        out = proc.stdout
        assert [line.split(":")[0] for line in out.splitlines()
                if line and not line.startswith(" ")] == ["anthropic", "openai"]
        assert "anthropic: 11 models (models endpoint, " in out
        rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
        assert rows["claude-sonnet-5-5"].split()[1:6] == [
            "1,000,000", "128,000", "2.00", "10.00", "default"]
        assert rows["claude-sonnet-4-5-20250929"].endswith(
            "DEPRECATED, shuts down 2026-11-30, use anthropic/claude-sonnet-5-5")
        assert "over 272k input: 4.00/15.00" in rows["gpt-6.1-sol"]
        assert "whisper-1" not in rows and "gemini-4-argon" not in rows
        assert sorted(r.format for r in server.requests) == ["anthropic", "openai"]

        offline = run_aistack(["models", "--offline"], cwd=git_repo, env=env)
        assert offline.stdout.replace(" ", "") == out.replace(" ", "")
        cached = run_aistack(["models"], cwd=git_repo, env=env)
        assert cached.returncode == 0
        assert len(server.requests) == 2, "a fresh cache is not fetched again"
        run_aistack(["models", "openai", "--refresh"], cwd=git_repo, env=env)
        assert [r.format for r in server.requests[2:]] == ["openai"]
    assert (aistack_home / "cache" / "models.json").is_file()


def test_json_output_names_dates_and_replacements(git_repo: Path) -> None:
    with FakeLLMServer() as server:
        proc = run_aistack(["models", "--json"], cwd=git_repo, env=server.env("google"))
    assert proc.returncode == 0, proc.stderr
    rows = {row["model"]: row for row in json.loads(proc.stdout)}
    argon = rows["google/gemini-4-argon"]
    assert (argon["context_window"], argon["max_output_tokens"]) == (1_048_576, 131_072)
    assert argon["default"] is True and argon["deprecated"] is None
    assert argon["source"] == "models endpoint"
    flash = rows["google/gemini-2.0-flash"]["deprecated"]
    assert flash == {"shutdown_date": None, "retired": False,
                     "replacement": "google/gemini-3.8-flash", "source": "genai-prices"}
    assert "google/gemini-embedding-001" not in rows


def test_unreachable_endpoint_falls_back_to_the_built_in_list(git_repo: Path) -> None:
    with FakeLLMServer() as gone:
        env = gone.env("anthropic")
    proc = run_aistack(["models"], cwd=git_repo, env=env)
    assert proc.returncode == 0
    assert proc.stderr.startswith("aistack: anthropic models endpoint: ")
    assert "showing the cached or built-in list" in proc.stderr
    assert "anthropic: 3 models (built-in table)" in proc.stdout
    assert "claude-sonnet-5-5" in proc.stdout and "default" in proc.stdout


def test_no_configured_provider_is_a_usage_error(git_repo: Path) -> None:
    proc = run_aistack(["models"], cwd=git_repo)
    assert proc.returncode == 2
    assert "no provider is configured" in proc.stderr
    named = run_aistack(["models", "deepseek", "--offline"], cwd=git_repo)
    assert named.returncode == 0, named.stderr
    assert "deepseek: 2 models (built-in table)" in named.stdout


def test_a_session_on_a_deprecated_model_is_warned_once_the_endpoint_has_said_so(
    git_repo: Path,
) -> None:
    old = ["-p", "hi", "--model", "anthropic/claude-sonnet-4-5"]
    with FakeLLMServer([Turn(text="hello"), Turn(text="hello")]) as server:
        env = server.env("anthropic")
        first = run_aistack(old, cwd=git_repo, env=env)
        assert first.returncode == 0, first.stderr
        assert "deprecated" not in first.stderr, "genai-prices does not mark it"
        assert run_aistack(["models", "anthropic"], cwd=git_repo, env=env).returncode == 0
        second = run_aistack(old, cwd=git_repo, env=env)
    assert second.returncode == 0 and second.stdout.strip() == "hello"
    assert "anthropic/claude-sonnet-4-5 is deprecated" in second.stderr
    assert "Switch to anthropic/claude-sonnet-5-5" in second.stderr
