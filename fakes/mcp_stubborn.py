"""FakeMcpStubborn: a working MCP server that ignores SIGTERM and SIGINT and outlives its
closed stdin, as a server stuck in a blocking call does; only SIGKILL ends it.

`python mcp_stubborn.py [PIDFILE]` writes its pid to PIDFILE first, so a test can check
that nothing of it is left once aistack has exited.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("stubborn")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


def main() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(str(os.getpid()))
    server.run("stdio")
    sys.stderr.write("stubborn server: stdin closed, staying anyway\n")
    sys.stderr.flush()
    while True:
        time.sleep(60)


if __name__ == "__main__":
    main()
