"""Real MCP servers for the MCP tests: the fixture server over HTTP/SSE, started once.

Starting a Python MCP server costs 2-4 s (importing the SDK), so the network servers are
session-scoped and each stdio test does several things with the server it starts.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parents[2] / "fakes"
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


EVERYTHING = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"
"""Pinned, so a new release cannot change what the tests see; the reference server of the
MCP project, written by nobody here, exercising every part of the protocol."""


def npm_install(request: pytest.FixtureRequest, package: str, version: str) -> Path:
    """`npm install package@version` once into pytest's cache, and the package's folder.

    Several xdist workers may ask at once: a file lock makes one install and the others
    wait for it. Skipped, with the reason, when node/npm are missing or the registry
    cannot be reached."""
    import fcntl
    import shutil

    npm = shutil.which("npm")
    if not shutil.which("node") or not npm:
        pytest.skip(f"node and npm are needed to run {package}")
    prefix = Path(request.config.cache.mkdir(f"mcp-npm-{package.replace('/', '+')}-{version}"))
    folder = prefix / "node_modules" / package
    with (prefix / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "package.json").exists():
            try:
                proc = subprocess.run(
                    [npm, "install", "--prefix", str(prefix), f"{package}@{version}",
                     "--no-audit", "--no-fund", "--loglevel=error"],
                    capture_output=True, text=True, timeout=170,
                )
            except subprocess.TimeoutExpired:
                pytest.skip(f"npm install {package} timed out (is the npm registry reachable?)")
            if proc.returncode != 0 or not (folder / "package.json").exists():
                pytest.skip(f"npm install {package} failed (registry unreachable?): "
                            f"{proc.stderr.strip()[-300:]}")
    return folder


@pytest.fixture(scope="session")
def everything_server(request: pytest.FixtureRequest) -> dict[str, object]:
    """A `.mcp.json` entry starting the published server-everything over stdio."""
    import shutil

    folder = npm_install(request, EVERYTHING, EVERYTHING_VERSION)
    return {"command": shutil.which("node"), "args": [str(folder / "dist" / "index.js"), "stdio"]}


@pytest.fixture
def reap_servers() -> Iterator[None]:
    """Stops the MCP servers a test's sessions left stopping in the background.

    A session's close waits a second for its servers and leaves the rest of their stop
    to the background (the CLI's exit kills what remains); a test's event loop ends
    first, so a busy server would run on for a while. Only this process's own children
    are touched: another xdist worker's servers are its business."""
    import os
    import signal

    yield
    me = os.getpid()
    deadline = time.monotonic() + 3
    while True:
        listing = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True,
                                 text=True).stdout.splitlines()[1:]
        children = [int(line.split()[0]) for line in listing
                    if int(line.split()[1]) == me and "mcp" in line and "ps -eo" not in line]
        if not children:
            return
        if time.monotonic() > deadline:
            for pid in children:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)  # each server leads its own group
            return
        time.sleep(0.2)
