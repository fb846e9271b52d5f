"""FakeMcpSilent: a process that never answers the MCP handshake (a hung server)."""

import sys
import time

sys.stderr.write("silent server: reading nothing, answering nothing\n")
sys.stderr.flush()
while True:
    time.sleep(60)
