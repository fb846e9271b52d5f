"""`npx -y` on a cold package cache starts on the first try: the server is downloaded
while the status says `starting (installing)…`, and nothing is killed mid-install."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from aistack_tui.cli.commands import mcp as mcp_command
from aistack_tui.session.config import make_run_config
from aistack_tui.trust_gate import gate_subcommand

from .conftest import EVERYTHING, EVERYTHING_VERSION

pytestmark = pytest.mark.timeout(240)


async def test_npx_server_on_a_cold_cache_starts_first_time(
    aistack_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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
    servers = {"ev": {"command": "npx", "env": env,
                      "args": ["-y", f"{EVERYTHING}@{EVERYTHING_VERSION}", "stdio"]}}
    project = tmp_path / "proj"
    project.mkdir()
    servers_file = tmp_path / "servers.json"
    servers_file.write_text(json.dumps({"mcpServers": servers}))
    # One second is far less than the download takes: the install allowance must apply.
    args = argparse.Namespace(command="mcp", action="list", timeout=1.0)
    config, trust = gate_subcommand(make_run_config(cwd=project, mcp_config=servers_file))
    code = await mcp_command.run(args, config, trust)
    out, _ = capsys.readouterr()
    assert code == 0, out
    assert "ev: starting (installing)…" in out
    assert "ev: connected, 14 tools" in out
    assert "1 task-only tool(s) not offered" in out
    assert (cache / "_npx").is_dir()
    log = (aistack_home / "logs" / "mcp-ev.log").read_text()
    assert "status connecting (installing)" in log
    assert "status failed" not in log


def _path_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME")}
