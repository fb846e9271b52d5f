"""server-everything in whole sessions against the fake LLM: a server prompt run as a slash
command in print mode, an `@server:uri` mention completed and attached, the model reading
a resource, and the permission rules that cover resources."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.print_mode.runner import run_print
from aistack_tui.session.config import make_run_config
from aistack_tui.session.mentions import FileIndex, prompt_blocks
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, write_user_settings

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("reap_servers")]
DOC = "demo://resource/static/document/features.md"
MODEL = "anthropic/claude-sonnet-4-6"


@pytest.fixture
def project(git_repo: Path, aistack_home: Path, everything_server: dict[str, object]) -> Path:
    write_user_settings(aistack_home, {**FAST_RETRY, "mcpConnectTimeout": 60})
    (aistack_home / "mcp.json").write_text(json.dumps({"mcpServers": {"ev": everything_server}}))
    return git_repo


def user_texts(server: FakeLLMServer) -> list[str]:
    """Every text the model was sent in user messages (prompts and tool results)."""
    found: list[str] = []
    for request in server.model_requests:
        for message in request.body.get("messages", []):
            content = message.get("content")
            if message.get("role") != "user":
                continue
            if isinstance(content, str):
                found.append(content)
                continue
            for block in content:
                if block.get("type") == "text":
                    found.append(block["text"])
                elif block.get("type") == "tool_result":
                    inner = block.get("content")
                    found.append(inner if isinstance(inner, str) else json.dumps(inner))
    return found


async def test_server_prompt_runs_as_a_slash_command_in_print_mode(
    project: Path, aistack_home: Path
) -> None:
    script = [Turn(tool_calls=[ToolCall("mcp__ev__get-roots-list", {})]), Turn(text="Sunny.")]
    with FakeLLMServer(script) as server:
        config = make_run_config(
            cwd=project, env={**_environ(), **server.env("anthropic")}, model=MODEL,
            mcp_config=aistack_home / "mcp.json", verbose=True, allowed_tools=["mcp__ev"],
        )
        out, err = io.StringIO(), io.StringIO()
        code = await run_print(config, "/mcp__ev__args-prompt Paris state=Texas", "text",
                               out=out, err=err)
        assert code == 0, err.getvalue()
        assert out.getvalue().strip() == "Sunny."
        assert "What's weather in Paris, Texas?" in user_texts(server)
        # The roots are the project; --verbose: the server's log messages reach stderr.
        assert any("Current MCP Roots (1 total)" in t and project.as_uri() in t
                   for t in user_texts(server))
        assert "aistack: MCP ev [info]: everything-server: Roots updated: 1 root(s)" in \
            err.getvalue()

        # A missing required argument is named before anything reaches the model.
        config = make_run_config(
            cwd=project, env={**_environ(), **server.env("anthropic")}, model=MODEL,
            mcp_config=aistack_home / "mcp.json",
        )
        err = io.StringIO()
        code = await run_print(config, "/mcp__ev__args-prompt", "text", out=io.StringIO(),
                               err=err)
        assert code == 1
        assert "/mcp__ev__args-prompt needs city: /mcp__ev__args-prompt city [state]" in \
            err.getvalue()
        assert len(server.model_requests) == 2


async def test_resource_mention_completes_attaches_and_obeys_rules(
    project: Path, aistack_home: Path
) -> None:
    script = [
        Turn(tool_calls=[ToolCall("ReadMcpResourceTool", {"server": "ev",
                                                          "uri": "demo://resource/dynamic/text/3"})]),
        Turn(text="Read it."),
    ]
    with FakeLLMServer(script) as server:
        config = make_run_config(
            cwd=project, env={**_environ(), **server.env("anthropic")}, model=MODEL,
            mcp_config=aistack_home / "mcp.json",
        )
        session = await open_session(config, DenyAll())
        try:
            await session.wait_for_mcp(60)
            # `@` completion offers the server's resources next to the files.
            index = FileIndex(project)
            index.resources = session.mcp.resource_mentions
            assert f"ev:{DOC}" in index.matches("ev:features")
            assert "README.md" in index.matches("READ")
            # The prompt commands are offered with their arguments.
            assert ("mcp__ev__args-prompt", "A prompt with two arguments, one required and "
                    "one optional", "city [state]") in [
                (n, h, a) for n, h, a in session.mcp.prompt_commands()
                if n == "mcp__ev__args-prompt"]

            text = f"summarise @ev:{DOC} please"
            blocks = await session.mcp.attach_resources(prompt_blocks(text, project))
            attached = blocks[-1].text  # type: ignore[union-attr]
            assert attached.startswith(f'<attached-resource server="ev" uri="{DOC}">')
            assert "## Tools" in attached
            async for _ in session.run(blocks):
                pass
        finally:
            await session.close()
        sent = user_texts(server)
        assert any(t.startswith('<attached-resource server="ev"') for t in sent)
        assert any("Resource 3: This is a plaintext resource" in t for t in sent)

    # A deny rule for the server covers its resources: the mention and the tool.
    write_user_settings(aistack_home, {"permissions": {"deny": ["mcp__ev"]}})
    script = [Turn(tool_calls=[ToolCall("ReadMcpResourceTool", {"server": "ev", "uri": DOC})]),
              Turn(text="Denied.")]
    with FakeLLMServer(script) as server:
        config = make_run_config(
            cwd=project, env={**_environ(), **server.env("anthropic")}, model=MODEL,
            mcp_config=aistack_home / "mcp.json",
        )
        session = await open_session(config, DenyAll())
        try:
            await session.wait_for_mcp(60)
            blocks = await session.mcp.attach_resources(prompt_blocks(f"@ev:{DOC}", project))
            assert blocks[-1].text.startswith(  # type: ignore[union-attr]
                f'<attached-resource server="ev" uri="{DOC}" error="denied by')
            async for _ in session.run("read it"):
                pass
            denials = session.denials
        finally:
            await session.close()
        assert [d.tool_name for d in denials] == ["ReadMcpResourceTool"]


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


async def test_line_mode_runs_a_server_prompt_and_attaches_a_resource(
    project: Path, aistack_home: Path
) -> None:
    import asyncio

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from rich.console import Console

    from aistack_tui.linemode.repl import run_line_mode
    from aistack_tui.linemode.terminal import LineIO

    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system=None,
                      _environ={"TERM": "xterm"})
    with FakeLLMServer([Turn(text="Sunny."), Turn(text="Seen it.")]) as server, \
            create_pipe_input() as pipe:
        # Typed at once: the prompt command waits for its server to finish starting.
        pipe.send_text(f"/mcp__ev__args-prompt Paris\rsummarise @ev:{DOC}\r\x04")
        config = make_run_config(
            cwd=project, env={**_environ(), **server.env("anthropic")}, model=MODEL,
            mcp_config=aistack_home / "mcp.json", no_memory=True, no_knowledge=True,
        )
        code = await asyncio.wait_for(
            run_line_mode(config, None, LineIO(console, pipe, DummyOutput())), 90)
        assert code == 0
        sent = user_texts(server)
    assert "What's weather in Paris?" in sent
    assert any(t.startswith(f'<attached-resource server="ev" uri="{DOC}">') for t in sent)
    assert "Sunny." in out.getvalue() and "Seen it." in out.getvalue()


async def test_print_mode_declines_a_form_and_says_why(project: Path, aistack_home: Path) -> None:
    script = [Turn(tool_calls=[ToolCall("mcp__ev__trigger-elicitation-request", {})]),
              Turn(text="The server wanted a form.")]
    with FakeLLMServer(script) as server:
        config = make_run_config(
            cwd=project, env={**_environ(), **server.env("anthropic")}, model=MODEL,
            mcp_config=aistack_home / "mcp.json", allowed_tools=["mcp__ev"],
        )
        err = io.StringIO()
        code = await run_print(config, "fill in the form", "text", out=io.StringIO(), err=err)
        assert code == 0, err.getvalue()
        reason = ("MCP server 'ev' asked for input ('Please provide inputs for the following "
                  "fields:'); this session has no one to answer questions")
        assert f"aistack: {reason}" in err.getvalue()  # without --verbose too
        result = next(t for t in user_texts(server) if "declined" in t)
        assert "User declined to provide the requested information" in result
        assert f"[aistack: {reason}" in result
