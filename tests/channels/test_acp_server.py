"""`aistack acp` as an editor drives it: a subprocess spoken to with the protocol
library's own client side (`acp.spawn_agent_process`), the model being the fake LLM."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.core import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, write_user_settings

pytestmark = pytest.mark.slow

AISTACK = [sys.executable, "-m", "aistack_tui.cli.main"]
MODEL = "anthropic/claude-sonnet-4-6"


class EditorClient:
    """What an editor does: shows updates, answers permission requests as told."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[ToolCallUpdate] = []
        self.answers: list[str] = []  # option ids to choose, in order; "cancel" to cancel
        self.first_chunk = asyncio.Event()

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.asked.append(tool_call)
        choice = self.answers.pop(0)
        assert choice == "cancel" or choice in {o.option_id for o in options}
        outcome = (DeniedOutcome(outcome="cancelled") if choice == "cancel"
                   else AllowedOutcome(outcome="selected", option_id=choice))
        return RequestPermissionResponse(outcome=outcome)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        if isinstance(update, AgentMessageChunk):
            self.first_chunk.set()

    def text(self, kind: type = AgentMessageChunk) -> str:
        return "".join(u.content.text for _, u in self.updates
                       if isinstance(u, kind) and u.content.type == "text")

    def of(self, kind: type) -> list[Any]:
        return [u for _, u in self.updates if isinstance(u, kind)]


@asynccontextmanager
async def acp_agent(client: EditorClient, repo: Path, server: FakeLLMServer, *,
                    capabilities: ClientCapabilities | None = None,
                    ) -> AsyncIterator[ClientSideConnection]:
    env = {**os.environ, **server.env("anthropic"), "AISTACK_MODEL": MODEL}
    # An editor that offers no file system or terminal implements only these two methods.
    editor = cast(Client, client)
    async with spawn_agent_process(editor, *AISTACK, "acp", env=env, cwd=repo) as (conn, proc):
        init = await asyncio.wait_for(conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities or ClientCapabilities()), 30)
        assert init.protocol_version == PROTOCOL_VERSION
        assert init.agent_capabilities is not None and init.agent_capabilities.load_session
        assert init.agent_info is not None and init.agent_info.name == "aistack"
        yield conn
        assert proc.returncode is None, "the agent died during the test"


async def test_editor_session_prompts_edits_cancels_and_loads(
        git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False})
    readme = git_repo / "README.md"
    client = EditorClient()
    with FakeLLMServer() as server:
        async with acp_agent(client, git_repo, server) as conn:
            session = await conn.new_session(cwd=str(git_repo))
            assert session.modes is not None and session.modes.current_mode_id == "default"
            sid = session.session_id

            # A prompt whose answer streams in several chunks.
            server.add(Turn(text="Hello from the fake model, in pieces.", chunk_size=4))
            done = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            assert done.stop_reason == "end_turn"
            chunks = client.of(AgentMessageChunk)
            assert len(chunks) > 1
            assert client.text() == "Hello from the fake model, in pieces."

            # An Edit the editor approves: the diff is in the request, the file changes.
            server.add(
                Turn(tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),
                Turn(tool_calls=[ToolCall("Edit", {"file_path": "README.md",
                                                   "old_string": "# test repo",
                                                   "new_string": "# edited repo"})]),
                Turn(text="Edited."),
            )
            client.answers = ["once"]
            done = await conn.prompt(session_id=sid, prompt=[text_block("edit the title")])
            assert done.stop_reason == "end_turn"
            assert readme.read_text() == "# edited repo\n"
            [asked] = client.asked
            assert asked.kind == "edit"
            [diff] = [c for c in asked.content or [] if isinstance(c, FileEditToolCallContent)]
            assert (diff.path, diff.old_text, diff.new_text) == (
                str(readme), "# test repo", "# edited repo")
            edit_id = asked.tool_call_id
            statuses = [u.status for u in client.of(ToolCallProgress)
                        if u.tool_call_id == edit_id and u.status]
            assert statuses[-1] == "completed"
            assert any(isinstance(u, ToolCallStart) and u.tool_call_id == edit_id
                       for _, u in client.updates)

            # A second Edit the editor denies: the file stays, the call fails.
            server.add(
                Turn(tool_calls=[ToolCall("Edit", {"file_path": "README.md",
                                                   "old_string": "# edited repo",
                                                   "new_string": "# unwanted"})]),
                Turn(text="Left it alone."),
            )
            client.answers = ["reject"]
            done = await conn.prompt(session_id=sid, prompt=[text_block("change it again")])
            assert done.stop_reason == "end_turn"
            assert readme.read_text() == "# edited repo\n"
            denied_id = client.asked[-1].tool_call_id
            assert [u.status for u in client.of(ToolCallProgress)
                    if u.tool_call_id == denied_id and u.status][-1] == "failed"
            tool_results = server.model_requests[-1].body["messages"][-1]["content"]
            assert any(b.get("is_error") for b in tool_results if isinstance(b, dict))

            # Cancel mid-turn: the prompt ends `cancelled` while the answer still streams.
            server.add(Turn(text="slow " * 400, chunk_size=5, delay=0.02))
            client.first_chunk.clear()
            before = len(client.of(AgentMessageChunk))
            running = asyncio.create_task(
                conn.prompt(session_id=sid, prompt=[text_block("say a lot")]))
            while len(client.of(AgentMessageChunk)) == before:
                await asyncio.sleep(0.01)
            await conn.cancel(session_id=sid)
            done = await asyncio.wait_for(running, 20)
            assert done.stop_reason == "cancelled"
            assert len(client.text()) < len("Hello from the fake model, in pieces.") + 2000

            # Mode switching, and an unknown mode refused.
            await conn.set_session_mode(session_id=sid, mode_id="acceptEdits")
            with pytest.raises(RequestError):
                await conn.set_session_mode(session_id=sid, mode_id="yolo")

        # A new agent process loads the stored session: history replayed, model sees it.
        replayed = EditorClient()
        async with acp_agent(replayed, git_repo, server) as conn:
            await conn.load_session(cwd=str(git_repo), session_id=sid)
            users = [u.content.text for u in replayed.of(UserMessageChunk)]
            assert users[:3] == ["hello", "edit the title", "change it again"]
            assert "Hello from the fake model, in pieces." in replayed.text()
            assert any(isinstance(u, ToolCallStart) and u.tool_call_id == edit_id
                       for u in replayed.of(ToolCallStart))
            # The model switches through its config option, from the next request on.
            changed = await conn.set_config_option(
                config_id="model", session_id=sid, value="anthropic/claude-haiku-4-5")
            model_option = next(o for o in changed.config_options if o.id == "model")
            assert model_option.current_value == "anthropic/claude-haiku-4-5"
            server.add(Turn(text="I remember."))
            done = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
            assert done.stop_reason == "end_turn"
            last = server.model_requests[-1].body
            assert last["model"] == "claude-haiku-4-5"
            sent = str(last["messages"])
            assert "edit the title" in sent and "still there?" in sent
