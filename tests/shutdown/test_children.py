"""Ending the children left at exit: their whole process group, SIGKILL for what ignores
SIGTERM, and never the caller's own group."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def test_a_group_that_ignores_sigterm_is_killed_and_the_caller_survives(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    # A child leading its own group starts a grandchild; both ignore SIGTERM. A second
    # child shares the caller's group: it is signalled alone, the caller lives on.
    script = textwrap.dedent(f"""
        import os, subprocess, sys, time
        from aistack_tui.shutdown.children import child_pids, end_children

        stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
        leader = subprocess.Popen(["bash", "-c", f"trap '' TERM; {{sys.executable}} -c '{{stubborn}}' & echo $! > {pids}; wait"],
                                  start_new_session=True)
        same_group = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        while not os.path.exists("{pids}") or not open("{pids}").read().strip():
            time.sleep(0.02)
        time.sleep(0.2)
        ended = end_children(grace=0.3)
        assert sorted(ended) == sorted([leader.pid, same_group.pid]), ended
        leader.wait(5); same_group.wait(5)
        print("caller alive", child_pids())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert "caller alive []" in done.stdout
    grandchild = int(pids.read_text())
    assert not Path(f"/proc/{grandchild}").exists() or (
        Path(f"/proc/{grandchild}/stat").read_text().split(") ")[1][0] == "Z")
