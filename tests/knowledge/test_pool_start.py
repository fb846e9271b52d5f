"""The parse pool starts when `sys.stderr` has no file descriptor, as under the TUI.

Textual stands a print capture in for `sys.stderr` whose `fileno()` is -1, and
multiprocessing's resource tracker, started with the first pool, is handed stderr's
descriptor: the pool failed to start (`ValueError: bad value(s) in fds_to_keep`) and the
first build of a big project died with it. Each case runs in a fresh interpreter: the
tracker is started once per process, and this one's may be running already.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio, sys

class Capture:  # as Textual's print capture: a file without a descriptor
    def write(self, text): return len(text)
    def flush(self): pass
    def isatty(self): return True
    def fileno(self): return -1

sys.stderr = Capture()
from aistack_tui.knowledge.pipeline import build_pool

async def main():
    pool = await build_pool(2)
    assert pool is not None, "no pool"
    assert pool.submit(sum, [1, 2]).result(timeout=30) == 3
    pool.shutdown()
    sys.stdout.write("pool started\\n")

if __name__ == "__main__":
    asyncio.run(main())
"""


def test_the_pool_starts_with_a_stderr_that_has_no_descriptor(tmp_path: Path) -> None:
    script = tmp_path / "pool_under_capture.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "pool started\n"
