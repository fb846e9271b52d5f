"""What a tool reaches past its own call obeys the rules too, through `aistack -p`.

WebFetch redirects are checked hop by hop; Grep, Glob, CodeSearch and the per-turn code
context leave out files a Read deny rule covers, secrets files and anything reached
through a symlink that leaves the project.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import run_aistack

pytestmark = pytest.mark.slow
MODEL = "anthropic/claude-sonnet-4-6"


def _serve(host: str, routes: dict[str, tuple[int, str]]) -> tuple[ThreadingHTTPServer, list[str]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(self.path)
            status, value = routes.get(self.path, (200, f"page {self.path}"))
            self.send_response(status)
            if status in (301, 302):
                self.send_header("Location", value)
                value = ""
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(value)))
            self.end_headers()
            self.wfile.write(value.encode())

    server = ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


@pytest.fixture
def far() -> Iterator[tuple[str, list[str]]]:
    server, seen = _serve("127.0.0.2", {"/secret": (200, "FAR-CONTENT-d41c")})
    yield f"http://127.0.0.2:{server.server_address[1]}", seen
    server.shutdown()


def test_webfetch_redirect_to_unapproved_host_is_not_followed(
    git_repo: Path, far: tuple[str, list[str]]
) -> None:
    far_url, far_seen = far
    near, _ = _serve("127.0.0.1", {"/away": (302, f"{far_url}/secret")})
    near_url = f"http://127.0.0.1:{near.server_address[1]}"
    script = [Turn(tool_calls=[ToolCall("WebFetch", {"url": f"{near_url}/away"})]),
              Turn(text="done")]
    try:
        with FakeLLMServer(script) as server:
            proc = run_aistack(
                ["-p", "read the page", "--model", MODEL,
                 "--allowed-tools", "WebFetch(domain:127.0.0.1)"],
                cwd=git_repo, env=server.env("anthropic"),
            )
            assert proc.returncode == 0, proc.stderr
            told = json.dumps(server.model_requests[-1].body)
    finally:
        near.shutdown()
    assert far_seen == []
    assert "FAR-CONTENT-d41c" not in told
    assert f"{far_url}/secret" in told
    assert "new WebFetch call" in told


PUBLIC = "PUBLIC-TOKEN-5b1e"
PRIVATE = "PRIVATE-TOKEN-7f3a"
OUTSIDE = "OUTSIDE-TOKEN-9c2e"
CLAUDE = "CLAUDE-TOKEN-11aa"
ENV = "ENV-TOKEN-3d9a"
HIDDEN = (PRIVATE, OUTSIDE, CLAUDE, ENV)


@pytest.fixture
def leaky_project(git_repo: Path, aistack_home: Path) -> Path:
    """A project with a public file, a denied directory, agent config, a secrets file and
    symlinks to a directory and a file outside; indexed before the deny rule existed."""
    (git_repo / "src").mkdir()
    (git_repo / "src" / "app.py").write_text(
        f'PUBLIC_VALUE = "{PUBLIC}"\n\n\ndef public_token_holder():\n    return PUBLIC_VALUE\n'
    )
    (git_repo / "private").mkdir()
    (git_repo / "private" / "notes.py").write_text(
        f'PRIVATE_VALUE = "{PRIVATE}"\n\n\ndef private_token_holder():\n    return PRIVATE_VALUE\n'
    )
    outside = git_repo.parent / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text(
        f'OUTSIDE_VALUE = "{OUTSIDE}"\n\n\ndef outside_token_holder():\n    return OUTSIDE_VALUE\n'
    )
    (git_repo / "linked").symlink_to(outside, target_is_directory=True)
    (git_repo / "linked_leak.py").symlink_to(outside / "leak.py")
    (git_repo / ".claude" / "agents").mkdir(parents=True)
    (git_repo / ".claude" / "agents" / "helper.md").write_text(
        f"# Helper agent\n\nclaude helper agent instructions {CLAUDE}\n"
    )
    (git_repo / ".env").write_text(f"API_SETTING={ENV}\n")
    (git_repo / "credentials.json").write_text(json.dumps({"credentials_key": ENV}))
    (git_repo / ".env.sh").write_text(f"export CREDENTIALS_KEY={ENV}\n")
    built = run_aistack(["index"], cwd=git_repo)
    assert built.returncode == 0, built.stderr
    # The rule comes after the index was built: the filter must hold at query time.
    (aistack_home / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./private/**)"]}})
    )
    return git_repo


def _tool_results(body: dict) -> list[str]:
    out: list[str] = []
    for message in body["messages"]:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") == "tool_result":
                out.append(json.dumps(block.get("content")))
    return out


def test_code_search_and_injected_code_context_leave_out_what_read_may_not_see(
    leaky_project: Path,
) -> None:
    script = [
        Turn(tool_calls=[
            ToolCall("CodeSearch", {"query": "private_token_holder PRIVATE_VALUE"}),
            ToolCall("CodeSearch", {"query": "outside_token_holder OUTSIDE_VALUE"}),
            ToolCall("CodeSearch", {"query": "claude helper agent instructions"}),
            ToolCall("CodeSearch", {"query": "credentials_key public_token_holder"}),
        ]),
        Turn(text="done"),
    ]
    with FakeLLMServer(script) as server:
        proc = run_aistack(
            ["-p", "where are private_token_holder, outside_token_holder, credentials_key, "
             "the claude helper agent and public_token_holder defined?", "--model", MODEL],
            cwd=leaky_project, env=server.env("anthropic"), timeout=90,
        )
        assert proc.returncode == 0, proc.stderr
        bodies = [r.body for r in server.model_requests]
    first = json.dumps(bodies[0])
    assert "Code knowledge" in first and "def public_token_holder" in first  # injection ran
    results = _tool_results(bodies[-1])
    assert len(results) == 4
    assert PUBLIC in results[3]
    for body in bodies:
        text = json.dumps(body["messages"])
        for token in HIDDEN:
            assert token not in text
        assert "private/notes.py" not in text
        assert "linked_leak.py" not in text
        assert "credentials.json" not in text
        assert ".claude/agents" not in text


def test_grep_and_glob_leave_out_denied_secret_and_symlinked_files(leaky_project: Path) -> None:
    pattern = "TOKEN-[0-9a-f]{4}"
    script = [
        Turn(tool_calls=[
            ToolCall("Grep", {"pattern": pattern, "output_mode": "content"}),
            ToolCall("Grep", {"pattern": pattern}),
            ToolCall("Grep", {"pattern": pattern, "output_mode": "count"}),
            ToolCall("Grep", {"pattern": pattern, "glob": "private/**", "output_mode": "content"}),
            ToolCall("Grep", {"pattern": pattern, "path": "private"}),
            ToolCall("Glob", {"pattern": "**/*"}),
            ToolCall("Glob", {"pattern": "**/*.py"}),
        ]),
        Turn(text="done"),
    ]
    with FakeLLMServer(script) as server:
        proc = run_aistack(
            ["-p", "search", "--model", MODEL], cwd=leaky_project,
            env=server.env("anthropic"), timeout=90,
        )
        assert proc.returncode == 0, proc.stderr
        results = _tool_results(server.model_requests[-1].body)
    assert len(results) == 7
    assert PUBLIC in results[0]
    assert "src/app.py" in results[1] and "src/app.py" in results[2]
    assert "src/app.py" in results[5] and "src/app.py" in results[6]
    for result in results:
        for token in (PRIVATE, OUTSIDE, ENV):  # agent config is readable, so Grep shows it
            assert token not in result
        for name in ("private/notes.py", "linked_leak.py", "leak.py", "/outside", ".env"):
            assert name not in result
