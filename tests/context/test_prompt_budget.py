"""The fixed prompt (system prompt and every tool definition) stays under 6,000 tokens
with all the built-in tools: it is resent with every request (issue 26, goal 4)."""

from __future__ import annotations

import json
from pathlib import Path

from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.llm.tokens import estimate_tokens
from aistack_tui.session.config import make_run_config

BUDGET = 6_000
MIN_TOOLS = 16


async def test_fixed_prompt_fits_the_budget_with_every_tool(git_repo: Path,
                                                           aistack_home: Path) -> None:
    env = {"AISTACK_HOME": str(aistack_home), "ANTHROPIC_API_KEY": "unused"}
    config = make_run_config(env=env, cwd=git_repo, model="anthropic/claude-sonnet-4-6")
    session = await open_session(config, DenyAll())
    try:
        tools = [spec.model_dump() for spec in session.agent.runner.tools.specs()]
        system = session.agent.system_prompt
    finally:
        await session.close()
    total = estimate_tokens(system) + estimate_tokens(json.dumps(tools))
    assert len(tools) >= MIN_TOOLS
    assert total <= BUDGET, f"{total} tokens ({len(tools)} tools)"
