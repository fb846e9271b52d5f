"""FakeMcpServer: a real MCPServer the MCP tests start over stdio or streamable HTTP.

`python mcp_server.py stdio` or `python mcp_server.py http PORT [PATH]`. Its tools cover
every case the client must handle: plain text, images, embedded resources, tool errors,
a crash mid-call (`crash` exits the process), a hang (`sleep`) and a huge result (`huge`).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import EmbeddedResource, ImageContent, TextResourceContents

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("fake")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable in the server's process."""
    return os.environ.get(name, "<unset>")


@server.tool()
def picture() -> list[object]:
    """A caption and a tiny PNG."""
    return [
        "a pixel",
        ImageContent(type="image", data=base64.b64encode(PIXEL).decode(), mime_type="image/png"),
    ]


@server.tool()
def document() -> EmbeddedResource:
    """An embedded text resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="file:///notes.txt", mime_type="text/plain",
                                      text="resource body"),
    )


@server.tool()
def fail(reason: str) -> str:
    """Raise an error (reported as is_error by the server)."""
    raise ValueError(reason)


@server.tool()
def crash() -> str:
    """Kill the server process in the middle of the call."""
    sys.stderr.write("fake server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, then answer: a call that hangs when `seconds` is long."""
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool()
def huge(megabytes: int) -> str:
    """A result of `megabytes` MB of text."""
    return "x" * (megabytes * 1024 * 1024)


def main() -> None:
    sys.stderr.write("fake server: starting\n")
    sys.stderr.flush()
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run("stdio")
    elif transport == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif transport == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        raise SystemExit(f"unknown transport {transport}")


if __name__ == "__main__":
    main()
