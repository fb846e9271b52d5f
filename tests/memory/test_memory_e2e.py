"""Across sessions through the real agent and the fake LLM server: a fact said in one
session is injected in a later session when it is relevant, and only then."""

from __future__ import annotations

import json
import os
from pathlib import Path

from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.session.config import make_run_config
from fakes.fake_llm import FakeLLMServer, Turn

MODEL = "anthropic/claude-sonnet-4-6"


async def _run_session(server: FakeLLMServer, prompt: str) -> None:
    config = make_run_config(env={**os.environ, **server.env("anthropic")}, model=MODEL)
    session = await open_session(config, DenyAll())
    try:
        async for _ in session.agent.run(prompt):
            pass
    finally:
        await session.close()


def _last_user_content(server: FakeLLMServer) -> str:
    body = server.model_requests[-1].body
    return json.dumps(body["messages"][-1], ensure_ascii=False)


async def test_deploy_fact_is_injected_in_a_later_session_only_when_relevant(
    git_repo: Path,
) -> None:
    server = FakeLLMServer([Turn(text="Noted."), Turn(text="Use fly deploy."),
                            Turn(text="It returns a dict.")]).start()
    try:
        await _run_session(server, "we deploy with fly.io, never heroku")
        await _run_session(server, "How should I deploy the app?")
        assert "fly.io" in _last_user_content(server)
        assert "heroku" in _last_user_content(server)
        await _run_session(server, "What does parse_config return?")
        assert "fly.io" not in _last_user_content(server)
        assert len(server.model_requests) == 3
    finally:
        server.stop()
