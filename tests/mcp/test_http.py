"""The fixture server over streamable HTTP and SSE; the schema budget; `aistack mcp list`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from aistack_tui.cli.commands import mcp as mcp_command
from aistack_tui.mcp.config import load_mcp_config
from aistack_tui.mcp.manager import McpManager
from aistack_tui.mcp.tools import (
    SEARCH_TOOL_NAME,
    McpToolSearch,
    build_tools,
)
from aistack_tui.session.config import make_run_config
from aistack_tui.tools.base import ToolContext, ToolError, ToolRegistry
from aistack_tui.trust_gate import gate_subcommand

from .conftest import free_port

pytestmark = pytest.mark.timeout(60)


def manager_for(home: Path, servers: dict[str, object], **options: float) -> McpManager:
    configs, warnings = load_mcp_config(home, None, servers, {})
    assert warnings == []
    return McpManager(configs, home / "logs", **options)  # type: ignore[arg-type]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path)


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_network_transports_call_tools(
    transport: str, aistack_home: Path, ctx: ToolContext, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(f"{transport}_server_url")
    manager = manager_for(aistack_home, {"net": {"type": transport, "url": url,
                                                 "headers": {"X-Test": "1"}}})
    try:
        await manager.start()
        await manager.wait_ready(30)
        [status] = manager.statuses()
        assert (status.status, status.transport, status.tool_count) == ("connected", transport, 9)
        registry = ToolRegistry(build_tools(manager, context_window=200_000))
        echo = registry.get("mcp__net__echo")
        assert echo is not None
        out = await echo.run(echo.parse_args({"text": transport}), ctx)
        assert out.content == f"echo: {transport}"
    finally:
        await manager.aclose()


async def test_unreachable_http_server_fails_without_raising(aistack_home: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    manager = manager_for(aistack_home, {"down": {"type": "http", "url": url}},
                          connect_timeout=10.0)
    try:
        await manager.start()
        await manager.wait_ready(20)
        [status] = manager.statuses()
        assert status.status == "failed"
        assert "ConnectError" in (status.error or "")
        assert build_tools(manager, context_window=200_000) == []
        with pytest.raises(Exception, match="MCP server 'down' is unavailable: ConnectError"):
            await manager.call("down", "echo", {"text": "x"})
    finally:
        await manager.aclose()


async def test_schemas_over_ten_percent_of_the_window_become_a_search_tool(
    aistack_home: Path, ctx: ToolContext, http_server_url: str
) -> None:
    manager = manager_for(aistack_home, {"net": {"type": "http", "url": http_server_url}})
    try:
        await manager.start()
        await manager.wait_ready(30)
        assert len(build_tools(manager, context_window=200_000)) == 9  # well under 10%
        deferred = build_tools(manager, context_window=4_000)  # 9 schemas > 400 tokens
        assert [t.name for t in deferred] == [SEARCH_TOOL_NAME]
        search = deferred[0]
        assert isinstance(search, McpToolSearch)
        assert "net (9 tools): echo, add" in search.description
        assert search.needs_permission is False

        registry = ToolRegistry(deferred)
        ctx.services.tool_registry = registry
        out = await search.run(search.parse_args({"query": "add integers"}), ctx)
        assert isinstance(out.content, str)
        assert out.content.startswith("## mcp__net__add\nAdd two integers.")
        assert '"required": ["a", "b"]' in out.content
        assert "Loaded: mcp__net__add" in out.content
        add = registry.get("mcp__net__add")
        assert add is not None  # callable by name from the next turn on
        assert (await add.run(add.parse_args({"a": 20, "b": 22}), ctx)).content == "42"

        picked = await search.run(search.parse_args({"query": "select:echo,mcp__net__env"}), ctx)
        assert "Loaded: mcp__net__echo, mcp__net__env" in str(picked.content)
        none = await search.run(search.parse_args({"query": "kubernetes"}), ctx)
        assert "No MCP tool matches 'kubernetes'" in str(none.content)
        # Rebuilt later (a new session, a reconnect): loaded tools stay registered.
        names = [t.name for t in build_tools(manager, context_window=4_000)]
        assert names == [SEARCH_TOOL_NAME, "mcp__net__echo", "mcp__net__add", "mcp__net__env"]
        with pytest.raises(ToolError, match="query"):
            search.parse_args({})

        # `/mcp` reconnect: listeners see the server go through connecting to connected.
        seen: list[str] = []
        manager.add_listener(lambda status: seen.append(f"{status.name}:{status.status}"))
        status = await manager.reconnect("net")
        assert status.status == "connected"
        assert seen == ["net:connecting", "net:connected"]
        assert (await add.run(add.parse_args({"a": 1, "b": 1}), ctx)).content == "2"
    finally:
        await manager.aclose()


async def test_mcp_list_prints_status_and_tools(
    aistack_home: Path, tmp_path: Path, http_server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "net": {"type": "http", "url": http_server_url},
        "broken": {"command": "no-such-mcp-server-binary"},
        "bad": {"type": "http"},
    }}))
    parser = argparse.ArgumentParser()
    mcp_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["mcp", "list", "--timeout", "20"])
    config, trust = gate_subcommand(make_run_config(cwd=project, trust_project=True))
    code = await mcp_command.run(args, config, trust)
    out, err = capsys.readouterr()
    assert code == 1  # one server failed
    assert f"net: connected, 9 tools  [http {http_server_url}]" in out
    assert "  mcp__net__echo  Return the text unchanged." in out
    assert "broken: failed" in out
    assert "  error: command not found: no-such-mcp-server-binary" in out
    assert f"  log: {aistack_home / 'logs' / 'mcp-broken.log'}" in out
    assert "warning: " in err
    assert "MCP server 'bad' skipped: an http server needs 'url'" in err


async def test_mcp_list_without_servers(
    aistack_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(command="mcp", action=None, timeout=5.0)
    config, trust = gate_subcommand(make_run_config(cwd=tmp_path))
    assert await mcp_command.run(args, config, trust) == 0
    assert "no MCP servers configured" in capsys.readouterr().out
