"""WebFetch checks every redirect hop with the permission engine before following it.

Two local servers stand for two hosts: 127.0.0.1 (the host the call was approved for)
and 127.0.0.2 (a host no rule allows). The second records every request, so a test can
show that a refused hop never reached it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleLayer
from aistack_tui.tools.base import ToolContext, ToolError
from aistack_tui.tools.services import ToolServices
from aistack_tui.tools.webfetch import WebFetchTool


class _Handler(BaseHTTPRequestHandler):
    seen: list[str]
    far: str = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path == "/away":
            self._redirect(f"{self.far}/secret")
        elif self.path == "/hop":
            self._redirect("/away")
        elif self.path == "/to-https-same-host":
            self._redirect("/page")
        elif self.path == "/to-file":
            self._redirect("file:///etc/passwd")
        else:
            body = f"page {self.path} on {self.server.server_address[0]}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


def _serve(host: str, far: str = "") -> tuple[ThreadingHTTPServer, list[str]]:
    seen: list[str] = []
    handler = type("H", (_Handler,), {"seen": seen, "far": far})
    server = ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


@pytest.fixture
def hosts() -> Iterator[tuple[str, str, list[str]]]:
    far, far_seen = _serve("127.0.0.2")
    far_url = f"http://127.0.0.2:{far.server_address[1]}"
    near, _ = _serve("127.0.0.1", far=far_url)
    near_url = f"http://127.0.0.1:{near.server_address[1]}"
    try:
        yield near_url, far_url, far_seen
    finally:
        near.shutdown()
        far.shutdown()


def _ctx(tmp_path: Path, allow: list[str] = (), deny: list[str] = ()) -> ToolContext:  # type: ignore[assignment]
    engine = PermissionEngine(
        layers=[RuleLayer("test", allow=list(allow), deny=list(deny))],
        mode="default",
        project_root=tmp_path,
        home=tmp_path,
    )
    ctx = ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path)
    ctx.services = ToolServices.checked_by(engine)
    return ctx


async def _fetch(ctx: ToolContext, url: str) -> str:
    tool = WebFetchTool(timeout=5)
    out = await tool.run(tool.parse_args({"url": url}), ctx)
    assert isinstance(out.content, str)
    return out.content


async def test_hop_to_a_host_that_would_ask_is_not_followed(tmp_path: Path, hosts) -> None:
    near, far, far_seen = hosts
    ctx = _ctx(tmp_path, allow=["WebFetch(domain:127.0.0.1)"])
    with pytest.raises(ToolError) as caught:
        await _fetch(ctx, f"{near}/away")
    message = str(caught.value)
    assert f"{far}/secret" in message
    assert "WebFetch" in message and "new" in message
    assert far_seen == []


async def test_hop_to_a_denied_host_stops_the_fetch(tmp_path: Path, hosts) -> None:
    near, far, far_seen = hosts
    ctx = _ctx(
        tmp_path, allow=["WebFetch(domain:127.0.0.1)"], deny=["WebFetch(domain:127.0.0.2)"]
    )
    with pytest.raises(ToolError, match="denied") as caught:
        await _fetch(ctx, f"{near}/away")
    assert f"{far}/secret" in str(caught.value)
    assert far_seen == []


async def test_every_hop_of_a_chain_is_checked(tmp_path: Path, hosts) -> None:
    near, _, far_seen = hosts
    ctx = _ctx(tmp_path, allow=["WebFetch(domain:127.0.0.1)"])
    with pytest.raises(ToolError, match=r"127\.0\.0\.2"):
        await _fetch(ctx, f"{near}/hop")
    assert far_seen == []


async def test_hop_to_an_allowed_host_is_followed(tmp_path: Path, hosts) -> None:
    near, far, far_seen = hosts
    ctx = _ctx(tmp_path, allow=["WebFetch(domain:127.0.0.1)", "WebFetch(domain:127.0.0.2)"])
    text = await _fetch(ctx, f"{near}/away")
    assert f"URL: {far}/secret" in text
    assert "page /secret on 127.0.0.2" in text
    assert far_seen == ["/secret"]


async def test_same_host_redirect_needs_no_rule(tmp_path: Path, hosts) -> None:
    """The user approved this host for this call; a hop within it asks nothing new."""
    near, _, _ = hosts
    ctx = _ctx(tmp_path)
    text = await _fetch(ctx, f"{near}/to-https-same-host")
    assert "page /page on 127.0.0.1" in text
    assert "redirected from" in text


async def test_without_the_engine_a_cross_host_hop_is_refused(tmp_path: Path, hosts) -> None:
    near, _, far_seen = hosts
    ctx = ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path)
    with pytest.raises(ToolError, match=r"127\.0\.0\.2"):
        await _fetch(ctx, f"{near}/away")
    assert far_seen == []


async def test_redirect_to_a_non_http_url_is_refused(tmp_path: Path, hosts) -> None:
    near, _, _ = hosts
    ctx = _ctx(tmp_path, allow=["WebFetch(domain:127.0.0.1)"])
    with pytest.raises(ToolError, match="file:///etc/passwd"):
        await _fetch(ctx, f"{near}/to-file")
