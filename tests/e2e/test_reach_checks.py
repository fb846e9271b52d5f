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

from tests.e2e.helpers import run_aistack
from tests.fakes.fake_llm import FakeLLMServer, ToolCall, Turn

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
