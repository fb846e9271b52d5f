"""The published `@modelcontextprotocol/server-everything` (the MCP project's reference
server) against our client: resources, roots, progress, elicitation, logs, task-only tools.

One server start serves all the checks of a test: starting node and the server costs
about a second, the checks a few milliseconds each.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from aistack_tui.mcp.config import load_mcp_config
from aistack_tui.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from aistack_tui.mcp.manager import McpManager
from aistack_tui.mcp.tools import build_tools
from aistack_tui.tools.base import ToolContext, ToolOutput, ToolRegistry
from aistack_tui.tools.editor import current_call_id
from aistack_tui.tools.services import ToolServices

pytestmark = pytest.mark.timeout(180)
DOC = "demo://resource/static/document/features.md"


class FormFiller:
    """Answers the server's form as a user would, and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ElicitationRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.asked.append(request)
        fields = {f.name: f for f in request.fields}
        return ElicitationAnswer("accept", {
            "name": fields["name"].parse("Ada Lovelace"),
            "integer": fields["integer"].parse(""),  # the default, 42
            "check": fields["check"].parse("yes"),
        })


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **raw: object) -> ToolOutput:
    tool = registry.get(name)
    assert tool is not None, f"{name} not in {registry.names()}"
    return await tool.run(tool.parse_args(raw), ctx)


@pytest.fixture
async def everything(
    everything_server: dict[str, object], aistack_home: Path, tmp_path: Path
) -> McpManager:
    configs, warnings = load_mcp_config(tmp_path, None, {"ev": everything_server}, {})
    assert warnings == []
    extra = tmp_path / "extra"
    extra.mkdir()
    manager = McpManager(configs, aistack_home / "logs", connect_timeout=60.0,
                         roots=[tmp_path, extra])
    logs: list[tuple[str, str, str]] = []
    manager.log_listener = lambda server, level, text: logs.append((server, level, text))
    manager.logs = logs  # type: ignore[attr-defined]
    await manager.start()
    await manager.wait_ready(90)
    [status] = manager.statuses()
    assert status.status == "connected", status.error
    yield manager  # type: ignore[misc]
    await manager.aclose(timeout=15)  # the whole stop, so no server outlives the test


async def test_everything_server_resources_roots_progress_logs_and_task_only_tools(
    everything: McpManager, tmp_path: Path
) -> None:
    manager = everything
    outputs: list[tuple[str, str]] = []
    ctx = ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path,
                      services=ToolServices(tool_output=lambda cid, text: outputs.append((cid, text))))
    registry = ToolRegistry(build_tools(manager, context_window=200_000))
    names = set(registry.names())

    # Task-only tools are not offered; tools needing what we do not declare (sampling,
    # URL elicitation) are not even registered by the server.
    [status] = manager.statuses()
    assert status.hidden_tools == 1
    assert "mcp__ev__simulate-research-query" not in names
    assert "mcp__ev__trigger-sampling-request" not in names
    assert "mcp__ev__trigger-url-elicitation" not in names
    assert {"mcp__ev__trigger-elicitation-request", "mcp__ev__get-roots-list"} <= names

    # Resources: listed with their server, read by URI.
    assert {"ListMcpResourcesTool", "ReadMcpResourceTool"} <= names
    listing = await call(registry, ctx, "ListMcpResourcesTool")
    assert f'"uri": "{DOC}"' in str(listing.content)
    assert '"server": "ev"' in str(listing.content)
    assert '"uriTemplate": "demo://resource/dynamic/text/{resourceId}"' in str(listing.content)
    # What reading would be denied is not listed at all.
    from aistack_tui.permissions.engine import PermissionEngine
    from aistack_tui.permissions.rules import RuleLayer

    engine = PermissionEngine(
        layers=[RuleLayer("test", deny=["ReadMcpResourceTool(ev:demo://*/document/s*)"])],
        mode="default", project_root=tmp_path, home=tmp_path / "home",
    )
    guarded = ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path,
                          services=ToolServices.checked_by(engine))
    shown = str((await call(registry, guarded, "ListMcpResourcesTool", server="ev")).content)
    assert DOC in shown
    assert "structure.md" not in shown and "startup.md" not in shown
    assert "structure.md" in str(listing.content)

    read = await call(registry, ctx, "ReadMcpResourceTool", server="ev", uri=DOC)
    assert str(read.content).startswith(f"[resource {DOC} (text/markdown)]")
    assert "## Tools" in str(read.content)

    # A resource link in a tool result says how to read it, and reading it works.
    links = await call(registry, ctx, "mcp__ev__get-resource-links", count=2)
    hint = "ReadMcpResourceTool(server='ev', uri='demo://resource/dynamic/text/2')"
    assert hint in str(links.content)
    linked = await call(registry, ctx, "ReadMcpResourceTool", server="ev",
                        uri="demo://resource/dynamic/text/2")
    assert "Resource 2: This is a plaintext resource" in str(linked.content)

    # Roots: the project and the added directory, as file URIs.
    roots = await call(registry, ctx, "mcp__ev__get-roots-list")
    assert "Current MCP Roots (2 total)" in str(roots.content)
    assert tmp_path.resolve().as_uri() in str(roots.content)
    assert (tmp_path / "extra").resolve().as_uri() in str(roots.content)
    # `/add-dir` adds a root: the server is told the list changed and asks again.
    added = tmp_path / "added"
    added.mkdir()
    manager.set_roots([tmp_path, tmp_path / "extra", added])
    for _ in range(50):
        roots = await call(registry, ctx, "mcp__ev__get-roots-list")
        if "Current MCP Roots (3 total)" in str(roots.content):
            break
        await asyncio.sleep(0.1)
    assert added.resolve().as_uri() in str(roots.content)
    # ... and the server's log message about them reached the log listener and file.
    logs = manager.logs  # type: ignore[attr-defined]
    assert ("ev", "info", "everything-server: Roots updated: 2 root(s) received from client") in logs
    log_file = (manager.log_dir / "mcp-ev.log").read_text()
    assert "[info] everything-server: Roots updated" in log_file

    # Progress of a slow tool arrives on the running call's card, line by line.
    token = current_call_id.set("call-7")
    try:
        slow = await call(registry, ctx, "mcp__ev__trigger-long-running-operation",
                          duration=1, steps=4)
    finally:
        current_call_id.reset(token)
    assert "Long running operation completed" in str(slow.content)
    progress = [text for cid, text in outputs if cid == "call-7"]
    assert progress == ["progress 1/4 (25%)\n", "progress 2/4 (50%)\n",
                        "progress 3/4 (75%)\n", "progress 4/4 (100%)\n"]


async def test_everything_server_elicitation_answered_then_declined(
    everything: McpManager, tmp_path: Path
) -> None:
    manager = everything
    ctx = ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path)
    registry = ToolRegistry(build_tools(manager, context_window=200_000))

    filler = FormFiller()
    manager.elicitation = filler
    answered = await call(registry, ctx, "mcp__ev__trigger-elicitation-request")
    [request] = filler.asked
    assert request.server == "ev"
    assert request.message == "Please provide inputs for the following fields:"
    kinds = {f.name: f.kind for f in request.fields}
    assert kinds["check"] == "boolean"
    assert kinds["integer"] == "integer"
    assert kinds["untitledSingleSelectEnum"] == "choice"
    assert kinds["titledMultipleSelectEnum"] == "multi"
    text = str(answered.content)
    assert "User provided the requested information" in text
    assert "- Name: Ada Lovelace" in text
    assert "- Favorite Integer: 42" in text
    assert "- Agreed to terms: true" in text

    # Nobody to ask (print mode, a headless client): declined, and the model is told why.
    from aistack_tui.mcp.elicitation import NO_ONE_TO_ASK, DeclineElicitation

    manager.elicitation = DeclineElicitation(NO_ONE_TO_ASK)
    declined = await call(registry, ctx, "mcp__ev__trigger-elicitation-request")
    text = str(declined.content)
    assert "User declined to provide the requested information" in text
    assert ("[aistack: MCP server 'ev' asked for input ('Please provide inputs for the "
            "following fields:'); this session has no one to answer questions") in text


class SlowFiller(FormFiller):
    """A user who takes longer to answer than the server may take to answer a call."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        await asyncio.sleep(2.5)
        return await super().elicit(request)


async def test_a_call_waiting_for_the_user_or_reporting_progress_is_not_a_hang(
    everything: McpManager, tmp_path: Path
) -> None:
    manager = everything
    manager._connections["ev"].call_timeout = 1.5  # a short limit, for speed
    ctx = ToolContext(project_root=tmp_path, cwd=tmp_path, home=tmp_path)
    registry = ToolRegistry(build_tools(manager, context_window=200_000))
    manager.elicitation = SlowFiller()
    answered = await call(registry, ctx, "mcp__ev__trigger-elicitation-request")
    assert "- Name: Ada Lovelace" in str(answered.content)
    # 3 s in all, but a progress report every half second: alive all along.
    slow = await call(registry, ctx, "mcp__ev__trigger-long-running-operation",
                      duration=3, steps=6)
    assert "Long running operation completed" in str(slow.content)
    assert manager.statuses()[0].status == "connected"
