from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from aistack_tui.tools.base import ToolContext, ToolError
from aistack_tui.tools.webfetch import WebFetchTool

PAGE = b"""<!doctype html><html><head><title>Docs</title><style>body{color:red}</style>
<script>alert('x')</script></head><body><h1>Install</h1><p>Run <code>pip install x</code>
now.</p><ul><li>one</li><li>two</li></ul><a href="/next">next</a></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def send(self, body: bytes, ctype: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (the timeout test)

    def do_GET(self) -> None:
        path = self.path
        if path == "/html":
            self.send(PAGE, "text/html; charset=utf-8")
        elif path == "/json":
            self.send(b'{"a": [1, 2]}', "application/json")
        elif path == "/latin1":
            self.send("café".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif path == "/png":
            self.send(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "image/png")
        elif path == "/big":
            self.send(b"a" * 3000, "text/plain")
        elif path == "/big-chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()  # no length: the client must count
            for _ in range(10):
                self.wfile.write(b"b" * 500)
        elif path == "/slow":
            time.sleep(3)
            self.send(b"late", "text/plain")
        elif path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/html")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path.startswith("/loop"):
            self.send_response(302)
            self.send_header("Location", path + "x")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send(b"nothing here", "text/plain", status=404)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


async def fetch(ctx: ToolContext, url: str, tool: WebFetchTool | None = None, **raw: object) -> str:
    tool = tool or WebFetchTool()
    out = await tool.run(tool.parse_args({"url": url, **raw}), ctx)
    assert isinstance(out.content, str)
    return out.content


async def test_html_becomes_markdown_without_scripts(ctx: ToolContext, server: str) -> None:
    text = await fetch(ctx, f"{server}/html", prompt="how to install")
    assert text.startswith(f"URL: {server}/html")
    assert "## Looking for: how to install" in text
    assert "# Install" in text
    assert "`pip install x`" in text
    assert "- one" in text
    assert "[next](/next)" in text
    assert "alert" not in text
    assert "color:red" not in text


async def test_json_and_charset_are_returned_as_is(ctx: ToolContext, server: str) -> None:
    assert (await fetch(ctx, f"{server}/json")).endswith('{"a": [1, 2]}')
    assert (await fetch(ctx, f"{server}/latin1")).endswith("café")


async def test_redirects_are_followed_and_reported(ctx: ToolContext, server: str) -> None:
    text = await fetch(ctx, f"{server}/redirect")
    assert f"URL: {server}/html" in text
    assert "redirected from" in text
    with pytest.raises(ToolError, match="redirected more than 5 times"):
        await fetch(ctx, f"{server}/loop")


async def test_binary_and_http_errors_are_refused(ctx: ToolContext, server: str) -> None:
    with pytest.raises(ToolError, match="binary content"):
        await fetch(ctx, f"{server}/png")
    with pytest.raises(ToolError, match="HTTP 404"):
        await fetch(ctx, f"{server}/missing")


async def test_size_limit(ctx: ToolContext, server: str) -> None:
    small = WebFetchTool(max_bytes=1000)
    with pytest.raises(ToolError, match="larger than"):
        await fetch(ctx, f"{server}/big", small)
    with pytest.raises(ToolError, match="larger than"):
        await fetch(ctx, f"{server}/big-chunked", small)


async def test_timeout(ctx: ToolContext, server: str) -> None:
    with pytest.raises(ToolError, match="timed out"):
        await fetch(ctx, f"{server}/slow", WebFetchTool(timeout=0.3))


async def test_long_content_is_truncated(ctx: ToolContext, server: str) -> None:
    text = await fetch(ctx, f"{server}/big", WebFetchTool(max_chars=100))
    assert "Content truncated: showing 100 of 3000 characters" in text


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://x/y", "not a url"])
async def test_only_http_urls(ctx: ToolContext, url: str) -> None:
    with pytest.raises(ToolError, match="only http"):
        await fetch(ctx, url)


async def test_connection_refused_is_clear(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Could not fetch"):
        await fetch(ctx, "http://127.0.0.1:9/")
