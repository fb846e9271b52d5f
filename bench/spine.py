"""Benchmarks of the spine (issue 2): start-up, prompt overhead, round trip, streaming.

    python bench/spine.py            # prints one table per benchmark

Each row is compared with the raw baseline measured in the same run on the same machine.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT, scratch_env, summary_ms, table, timed_runs

from tests.fakes.fake_llm import FakeLLMServer, Turn

AISTACK = [sys.executable, "-m", "aistack_tui.cli.main"]
STREAM_TOKENS = 20_000


def bench_startup(runs: int = 15) -> str:
    bare = timed_runs(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), runs)
    version = timed_runs(
        lambda: subprocess.run([*AISTACK, "--version"], check=True, capture_output=True), runs
    )
    b, v = summary_ms(bare), summary_ms(version)
    return table(
        "aistack --version (goal < 100 ms)",
        ["command", "median ms", "p90 ms"],
        [["python -c pass", f"{b[0]:.1f}", f"{b[1]:.1f}"],
         ["aistack --version", f"{v[0]:.1f}", f"{v[1]:.1f}"],
         ["difference", f"{v[0] - b[0]:.1f}", ""]],
    )


def bench_prompt_overhead() -> str:
    from aistack_tui.agent.ports import DenyAll
    from aistack_tui.bootstrap import make_run_config, open_session
    from aistack_tui.llm.tokens import estimate_tokens

    env, repo = scratch_env()
    env["ANTHROPIC_API_KEY"] = "unused"

    async def session_prompt() -> tuple[str, list[dict]]:
        # The real session: built-in tools plus Task, Skill, memory and CodeSearch tools,
        # and the bundled skills' catalogue in the system prompt.
        config = make_run_config(env=env, cwd=repo, model="anthropic/claude-sonnet-4-6")
        session = await open_session(config, DenyAll())
        try:
            specs = [s.model_dump() for s in session.agent.runner.tools.specs()]
            return session.agent.system_prompt, specs
        finally:
            await session.close()

    system, tools = asyncio.run(session_prompt())
    sys_tokens = estimate_tokens(system)
    tool_tokens = estimate_tokens(json.dumps(tools))
    rows = [["system prompt", str(sys_tokens)],
            [f"tool definitions ({len(tools)} tools)", str(tool_tokens)],
            ["total per request", str(sys_tokens + tool_tokens)],
            ["Claude Code (reference)", "19000-29000"]]
    return table("Fixed prompt overhead in tokens (goal < 6,000; cached on Anthropic)",
                 ["part", "tokens (estimate)"], rows)


BARE_ROUND_TRIP = """
import os, sys, anthropic
client = anthropic.Anthropic(max_retries=0)
with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100,
        messages=[{"role": "user", "content": "hi"}]) as s:
    text = "".join(s.text_stream)
print(text)
"""


def bench_round_trip(runs: int = 8) -> str:
    env, repo = scratch_env()
    with FakeLLMServer([Turn(text="pong") for _ in range(runs * 2)]) as server:
        env.update(server.env("anthropic"))
        bare = timed_runs(lambda: subprocess.run([sys.executable, "-c", BARE_ROUND_TRIP],
                                                 env=env, check=True, capture_output=True), runs)
        ours = timed_runs(lambda: subprocess.run(
            [*AISTACK, "-p", "hi", "--model", "anthropic/claude-sonnet-4-6"], env=env, cwd=repo,
            check=True, capture_output=True, stdin=subprocess.DEVNULL), runs)
    b, o = summary_ms(bare), summary_ms(ours)
    return table("aistack -p round trip vs bare anthropic SDK script (goal: ≤ +150 ms)",
                 ["command", "median ms", "p90 ms"],
                 [["bare SDK script", f"{b[0]:.0f}", f"{b[1]:.0f}"],
                  ["aistack -p", f"{o[0]:.0f}", f"{o[1]:.0f}"],
                  ["overhead", f"{o[0] - b[0]:+.0f}", ""]])


async def _bare_stream(url: str) -> float:
    import anthropic

    client = anthropic.AsyncAnthropic(base_url=url, api_key="fake", max_retries=0)
    start = time.perf_counter()
    n = 0
    async with client.messages.stream(model="claude-sonnet-4-6", max_tokens=64000,
                                      messages=[{"role": "user", "content": "go"}]) as s:
        async for _ in s.text_stream:
            n += 1
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


async def _agent_stream(env: dict[str, str], repo: Path) -> float:
    from aistack_tui.agent.events import TextDelta
    from aistack_tui.agent.ports import DenyAll
    from aistack_tui.bootstrap import make_run_config, open_session

    config = make_run_config(env=env, cwd=repo, model="anthropic/claude-sonnet-4-6")
    session = await open_session(config, DenyAll())
    start = time.perf_counter()
    n = 0
    async for event in session.agent.run("go"):
        if isinstance(event, TextDelta):
            n += 1
    elapsed = time.perf_counter() - start
    await session.close()
    return elapsed


def bench_streaming(runs: int = 3) -> str:
    env, repo = scratch_env()
    text = "tok " * STREAM_TOKENS  # one token per 4-char delta
    turns = [Turn(text=text, chunk_size=4) for _ in range(runs * 2)]
    with FakeLLMServer(turns) as server:
        env.update(server.env("anthropic"))
        bare = [asyncio.run(_bare_stream(server.url)) for _ in range(runs)]
        ours = [asyncio.run(_agent_stream(env, repo)) for _ in range(runs)]
    b, o = min(bare), min(ours)
    return table(f"Consuming a {STREAM_TOKENS:,}-token stream (goal < 1.2x)",
                 ["consumer", "best of 3 (s)", "ratio"],
                 [["bare SDK text_stream", f"{b:.2f}", "1.00"],
                  ["aistack agent loop", f"{o:.2f}", f"{o / b:.2f}"]])


def main() -> None:
    print(f"# aistack spine benchmarks ({ROOT.name})")
    for bench in (bench_startup, bench_prompt_overhead, bench_round_trip, bench_streaming):
        print(bench(), flush=True)


if __name__ == "__main__":
    main()
