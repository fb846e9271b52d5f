"""Real MCP servers for the MCP tests: the fixture server over HTTP/SSE, started once.

Starting a Python MCP server costs 2-4 s (importing the SDK), so the network servers are
session-scoped and each stdio test does several things with the server it starts.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parent.parent / "fakes"
FAKE_SERVER = FAKES / "mcp_server.py"


def stdio_entry(script: str = "mcp_server.py", **extra: object) -> dict[str, object]:
    """A `.mcp.json` entry that runs one of the fake servers with this interpreter."""
    return {"command": sys.executable, "args": [str(FAKES / script)], **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(transport: str, log: Path) -> Iterator[str]:
    port = free_port()
    with log.open("w") as errlog:
        proc = subprocess.Popen(
            [sys.executable, str(FAKE_SERVER), transport, str(port)],
            stdout=subprocess.DEVNULL, stderr=errlog,
        )
    try:
        deadline = time.monotonic() + 40
        while True:
            if proc.poll() is not None:
                pytest.fail(f"fake MCP {transport} server exited: {log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"fake MCP {transport} server did not listen on {port}")
                time.sleep(0.05)
        path = "/mcp" if transport == "http" else "/sse"
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def http_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture server over streamable HTTP on 127.0.0.1."""
    yield from _start("http", tmp_path_factory.mktemp("mcp-http") / "server.log")


@pytest.fixture(scope="session")
def sse_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture server over the older SSE transport on 127.0.0.1."""
    yield from _start("sse", tmp_path_factory.mktemp("mcp-sse") / "server.log")
