"""server-everything in the TUI: `@` completes a resource and attaches it; the server's
prompt is a slash command that sends what the server returns."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import OptionList

from aistack_tui.session.config import make_run_config
from aistack_tui.tui.app import AistackApp
from aistack_tui.tui.widgets.entries import NoticeEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from fakes.fake_llm import FakeLLMServer, Turn
from tests.tui.conftest import wait_for
from tests.tui.test_app import answered, entries

from .test_everything_session import user_texts

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("reap_servers")]
DOC = "demo://resource/static/document/features.md"


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    for key, value in server.env("anthropic").items():
        monkeypatch.setenv(key, value)
    try:
        yield server
    finally:
        server.stop()
        gc.unfreeze()  # the app freezes what it built; the next test must collect it


async def test_tui_completes_and_attaches_a_resource_and_runs_a_server_prompt(
    git_repo: Path, aistack_home: Path, fake_llm: FakeLLMServer,
    everything_server: dict[str, object],
) -> None:
    servers = aistack_home / "mcp.json"
    servers.write_text(json.dumps({"mcpServers": {"ev": everything_server}}))
    fake_llm.add(Turn(text="Seen it."), Turn(text="Sunny."))
    config = make_run_config(cwd=git_repo, model="anthropic/claude-sonnet-4-6",
                             mcp_config=servers)
    app = AistackApp(config, None, local_servers=())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        session = app.session
        assert session is not None
        await wait_for(pilot, lambda: any(s.status == "connected"
                                          for s in session.mcp_statuses()), timeout=60)

        await pilot.press(*"read @ev:features")
        options = app.screen.query_one("#completions", OptionList)
        shown = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert shown[0] == f"ev:{DOC}"
        await pilot.press("tab")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == f"read @ev:{DOC} "
        await pilot.press("enter")
        await wait_for(pilot, lambda: answered(app, "Seen it."), timeout=30)

        # The prompt command is offered once the server connected, with its arguments.
        await pilot.press(*"/mcp__ev__args")
        shown = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert shown == ["/mcp__ev__args-prompt"]
        await pilot.press("tab", *"Paris", "enter")
        await wait_for(pilot, lambda: answered(app, "Sunny."), timeout=30)

        # /mcp lists the server's prompts and resources with its tools.
        await pilot.press(*"/mcp", "enter")

        def listing() -> str:
            found = [e.text for e in entries(app)
                     if isinstance(e, NoticeEntry) and "MCP servers:" in e.text]
            return found[-1] if found else ""

        await wait_for(pilot, listing)
        assert "prompts: /mcp__ev__simple-prompt, /mcp__ev__args-prompt" in listing()
        assert "resources: 7 (@ev:… attaches one)" in listing()
        assert "1 task-only tool(s) not offered" in listing()
    sent = user_texts(fake_llm)
    assert any(t.startswith(f'<attached-resource server="ev" uri="{DOC}">') for t in sent)
    assert "What's weather in Paris?" in sent
