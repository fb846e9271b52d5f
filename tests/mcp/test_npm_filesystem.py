"""The published `@modelcontextprotocol/server-filesystem` (Node) over stdio.

Installed with npm into pytest's cache directory once, so later runs start at once;
skipped with the reason when node/npm are missing or the registry is unreachable.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aistack_tui.mcp.config import load_mcp_config
from aistack_tui.mcp.manager import McpManager
from aistack_tui.mcp.tools import build_tools
from aistack_tui.tools.base import ToolContext, ToolError, ToolRegistry

PACKAGE = "@modelcontextprotocol/server-filesystem"
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="session")
def filesystem_server(request: pytest.FixtureRequest) -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node and npm are needed to run the published filesystem MCP server")
    prefix = Path(request.config.cache.mkdir("mcp-npm"))
    entry = prefix / "node_modules" / PACKAGE / "dist" / "index.js"
    if not entry.exists():
        try:
            proc = subprocess.run(
                [npm, "install", "--prefix", str(prefix), PACKAGE, "--no-audit", "--no-fund",
                 "--loglevel=error"],
                capture_output=True, text=True, timeout=150,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {PACKAGE} timed out")
        if proc.returncode != 0 or not entry.exists():
            pytest.skip(f"npm install {PACKAGE} failed: {proc.stderr.strip()[-300:]}")
    return entry


async def test_published_filesystem_server_over_stdio(
    filesystem_server: Path, aistack_home: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("line one\nline two\n")
    node = shutil.which("node")
    configs, warnings = load_mcp_config(
        tmp_path, None,
        {"fs": {"command": "${NODE}", "args": [str(filesystem_server), "${SHARED}"]}},
        {"NODE": str(node), "SHARED": str(shared)},
    )
    assert warnings == []
    manager = McpManager(configs, aistack_home / "logs", connect_timeout=60.0)
    ctx = ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path)
    try:
        await manager.start()
        await manager.wait_ready(90)
        [status] = manager.statuses()
        assert status.status == "connected", status.error
        registry = ToolRegistry(build_tools(manager, context_window=200_000))
        assert {"mcp__fs__list_directory", "mcp__fs__write_file"} <= set(registry.names())

        listing = registry.get("mcp__fs__list_directory")
        assert listing is not None
        out = await listing.run(listing.parse_args({"path": str(shared)}), ctx)
        assert "[FILE] notes.txt" in str(out.content)

        write = registry.get("mcp__fs__write_file")
        assert write is not None
        await write.run(write.parse_args({"path": str(shared / "new.txt"), "content": "hi"}), ctx)
        assert (shared / "new.txt").read_text() == "hi"

        # Outside the allowed directory: the server's own error reaches the model.
        denied = await listing.run(listing.parse_args({"path": str(tmp_path)}), ctx)
        assert denied.is_error
        assert "outside allowed directories" in str(denied.content).lower() or \
            "access denied" in str(denied.content).lower()
        with pytest.raises(ToolError, match="Invalid arguments for mcp__fs__list_directory"):
            listing.parse_args({"path": 3})
    finally:
        await manager.aclose()
    log = (aistack_home / "logs" / "mcp-fs.log").read_text()
    assert "Secure MCP Filesystem Server" in log or "starting" in log
