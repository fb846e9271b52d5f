"""A real MCPServer over stdio: tools, results, and isolation of crashes and hangs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aistack_tui.llm.types import ImageBlock, TextBlock
from aistack_tui.mcp.config import load_mcp_config
from aistack_tui.mcp.manager import McpManager
from aistack_tui.mcp.tools import build_tools
from aistack_tui.tools.base import ToolContext, ToolError, ToolOutput, ToolRegistry

from .conftest import stdio_entry

pytestmark = pytest.mark.timeout(90)


def make_manager(home: Path, servers: dict[str, object], **options: float) -> McpManager:
    configs, warnings = load_mcp_config(
        home, None, servers, {**os.environ, "GREETING": "hello from env"}
    )
    assert warnings == []
    connect_timeout = options.pop("connect_timeout", 30.0)
    return McpManager(configs, home / "logs", connect_timeout=connect_timeout, **options)


async def call(
    registry: ToolRegistry, ctx: ToolContext, tool_name: str, **raw: object
) -> ToolOutput:
    tool = registry.get(tool_name)
    assert tool is not None, f"{tool_name} not in {registry.names()}"
    return await tool.run(tool.parse_args(raw), ctx)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path)


async def test_stdio_server_tools_and_every_kind_of_result(
    aistack_home: Path, ctx: ToolContext
) -> None:
    manager = make_manager(
        aistack_home,
        {"fake": stdio_entry(env={"GREETING": "${GREETING}"})},
        max_result_chars=10_000,
    )
    try:
        await manager.start()
        await manager.wait_ready(60)
        [status] = manager.statuses()
        assert (status.name, status.status, status.error) == ("fake", "connected", None)
        assert status.tool_count == 9
        registry = ToolRegistry(build_tools(manager, context_window=200_000))
        assert "mcp__fake__echo" in registry
        spec = registry.get("mcp__fake__add").spec()  # type: ignore[union-attr]
        assert spec.input_schema["required"] == ["a", "b"]
        assert spec.input_schema["properties"]["a"]["type"] == "integer"
        assert "Add two integers." in spec.description

        assert (await call(registry, ctx, "mcp__fake__echo", text="hi")).content == "echo: hi"
        assert (await call(registry, ctx, "mcp__fake__add", a=2, b=3)).content == "5"
        # `env` entries reach the server, with ${VAR} expanded from our environment.
        env_out = await call(registry, ctx, "mcp__fake__env", name="GREETING")
        assert env_out.content == "hello from env"

        picture = await call(registry, ctx, "mcp__fake__picture")
        assert isinstance(picture.content, list)
        assert picture.content[0] == TextBlock(text="a pixel")
        assert isinstance(picture.content[1], ImageBlock)
        assert picture.content[1].media_type == "image/png"

        document = await call(registry, ctx, "mcp__fake__document")
        assert document.content == "[resource file:///notes.txt (text/plain)]\nresource body"

        failed = await call(registry, ctx, "mcp__fake__fail", reason="nope")
        assert failed.is_error

        # The schema is checked before anything is sent.
        with pytest.raises(ToolError, match="'text' is a required property"):
            registry.get("mcp__fake__echo").parse_args({})  # type: ignore[union-attr]
        with pytest.raises(ToolError, match="a: 'x' is not of type 'integer'"):
            registry.get("mcp__fake__add").parse_args({"a": "x", "b": 1})  # type: ignore[union-attr]

        huge = await call(registry, ctx, "mcp__fake__huge", megabytes=1)
        assert isinstance(huge.content, str)
        assert huge.content.startswith("x" * 10_000)
        assert "[result truncated: the server returned 1048576 characters" in huge.content
        assert len(huge.content) < 10_300
    finally:
        await manager.aclose()
    log = (aistack_home / "logs" / "mcp-fake.log").read_text()
    assert "fake server: starting" in log  # the server's stderr went to its log, not ours


async def test_crash_and_hang_give_tool_errors_and_the_manager_goes_on(
    aistack_home: Path, ctx: ToolContext
) -> None:
    manager = make_manager(
        aistack_home,
        {
            "fake": stdio_entry(),
            "exits": stdio_entry("mcp_exit.py"),
            "missing": {"command": "no-such-mcp-server-binary"},
            "off": {"command": "whatever", "disabled": True},
        },
        call_timeout=2.0,
    )
    # A server that never answers the handshake, with a short start-up timeout.
    hung = make_manager(aistack_home, {"silent": stdio_entry("mcp_silent.py")},
                        connect_timeout=1.0)
    try:
        await manager.start()
        await hung.start()
        assert {s.status for s in manager.statuses()} <= {"connecting", "disabled"}
        await manager.wait_ready(60)
        await hung.wait_ready(30)
        by_name = {s.name: s for s in manager.statuses()}
        assert by_name["fake"].status == "connected"
        assert by_name["off"].status == "disabled"
        assert by_name["missing"].status == "failed"
        assert by_name["missing"].error == "command not found: no-such-mcp-server-binary"
        assert by_name["exits"].status == "failed"
        assert "missing API token, giving up" in (by_name["exits"].error or "")
        [silent] = hung.statuses()
        assert silent.status == "failed"
        assert "did not finish starting within 1 s" in (silent.error or "")
        assert "answering nothing" in (silent.error or "")  # its last stderr line
        assert build_tools(hung, context_window=200_000) == []
        registry = ToolRegistry(build_tools(manager, context_window=200_000))
        assert {n.split("__")[1] for n in registry.names()} == {"fake"}

        # A crash mid-call: a clear tool error naming what the server said last.
        with pytest.raises(ToolError) as crash:
            await call(registry, ctx, "mcp__fake__crash")
        assert "exited or crashed while running 'crash'" in str(crash.value)
        assert "crashing on purpose" in str(crash.value)
        assert manager.statuses()[0].status == "failed"
        # ... and the next call starts the server again.
        assert (await call(registry, ctx, "mcp__fake__echo", text="back")).content == "echo: back"
        assert manager.statuses()[0].status == "connected"

        # A hang mid-call: timed out, stopped, restarted on the next call.
        with pytest.raises(ToolError, match="did not answer 'sleep' within 2 s"):
            await call(registry, ctx, "mcp__fake__sleep", seconds=60)
        assert manager.statuses()[0].status == "failed"
        assert (await call(registry, ctx, "mcp__fake__echo", text="again")).content == "echo: again"
    finally:
        await manager.aclose()
        await hung.aclose()
