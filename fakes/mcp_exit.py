"""FakeMcpExit: a server that fails at start, as a misconfigured one does."""

import sys

sys.stderr.write("exit server: missing API token, giving up\n")
sys.exit(1)
