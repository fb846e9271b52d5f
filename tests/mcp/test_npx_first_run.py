"""`npx -y` on a cold package cache starts on the first try: the server is downloaded
while the status says `starting (installing)…`, nothing is killed mid-install, and
nothing is left running once `aistack mcp list` has exited."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import run_aistack, write_user_settings

from .conftest import EVERYTHING, EVERYTHING_VERSION

pytestmark = pytest.mark.timeout(240)


def leftovers(marker: str) -> list[str]:
    """Processes whose command line names `marker` (our test's own npm cache)."""
    found = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in found.splitlines() if marker in line and "ps -eo" not in line]


def test_npx_server_on_a_cold_cache_starts_first_time(aistack_home: Path, tmp_path: Path) -> None:
    npx, npm = shutil.which("npx"), shutil.which("npm")
    if not npx or not npm:
        pytest.skip("npx and npm are needed for a first `npx -y` run")
    cache = tmp_path / "npm-cache"  # empty: npx must download the server and its deps
    env = {"npm_config_cache": str(cache), "npm_config_update_notifier": "false"}
    probe = subprocess.run(
        [npm, "view", f"{EVERYTHING}@{EVERYTHING_VERSION}", "version"],
        capture_output=True, text=True, timeout=60, env={**_path_env(), **env},
    )
    if probe.returncode != 0:
        pytest.skip(f"the npm registry cannot be reached: {probe.stderr.strip()[-200:]}")
    write_user_settings(aistack_home, {"mcpServers": {"ev": {
        "command": "npx", "env": env,
        "args": ["-y", f"{EVERYTHING}@{EVERYTHING_VERSION}", "stdio"],
    }}})
    project = tmp_path / "proj"
    project.mkdir()
    # One second is far less than the download takes: the install allowance must apply.
    done = run_aistack(["mcp", "list", "--timeout", "1"], cwd=project, timeout=200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ev: starting (installing)…" in done.stdout
    assert "ev: connected, 14 tools" in done.stdout
    assert "1 task-only tool(s) not offered" in done.stdout
    assert (cache / "_npx").is_dir()
    log = (aistack_home / "logs" / "mcp-ev.log").read_text()
    assert "status connecting (installing)" in log
    assert "status failed" not in log
    # The exit stops the server: npx, its shell and node, whatever they were doing.
    deadline = time.monotonic() + 10
    while leftovers(str(cache)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers(str(cache)) == []


def _path_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME")}
