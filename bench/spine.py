"""Benchmarks of the spine (issue 2): start-up, prompt overhead, round trip, streaming.

    python bench/spine.py                # prints one table per benchmark
    python bench/spine.py round_trip     # only the named ones (startup, prompt, round_trip,
                                         # streaming)

Each row is compared with the raw baseline measured in the same run on the same machine.
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT, scratch_env, summary_ms, table, timed_runs

from fakes.fake_llm import FakeLLMServer, Turn

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
    from aistack_tui.bootstrap import open_session
    from aistack_tui.llm.tokens import estimate_tokens
    from aistack_tui.session.config import make_run_config

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


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd: list[str], **kwargs: object) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process run to completion."""
    cpu = _child_cpu()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, stdin=subprocess.DEVNULL, **kwargs)  # type: ignore[call-overload]
    return time.perf_counter() - start, _child_cpu() - cpu


BARE_GC_PAUSED = "import gc\ngc.disable()\n" + BARE_ROUND_TRIP
"""The floor again with the cyclic GC paused, as `aistack` pauses it for its start-up: the
stricter comparison, since that saving is open to any Python program."""


def bench_round_trip(runs: int = 10) -> str:
    """Interleaved rounds (the order alternates), so load from anything else on the machine
    hits every command alike; differences are taken within each round."""
    env, repo = scratch_env()
    commands = {
        "bare SDK script": [sys.executable, "-c", BARE_ROUND_TRIP],
        "bare SDK script, GC paused": [sys.executable, "-c", BARE_GC_PAUSED],
        "aistack -p": [*AISTACK, "-p", "hi", "--model", "anthropic/claude-sonnet-4-6"],
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    with FakeLLMServer([Turn(text="pong") for _ in range(runs * 3 + 3)]) as server:
        env.update(server.env("anthropic"))
        for cmd in commands.values():  # warm-up: database creation, page cache
            _timed(cmd, env=env, cwd=repo)
        for i in range(runs):
            names = list(commands) if i % 2 == 0 else list(commands)[::-1]
            for name in names:
                samples[name].append(_timed(commands[name], env=env, cwd=repo))

    def ms(values: list[float]) -> list[str]:
        return [f"{statistics.median(values) * 1000:.0f}", f"{min(values) * 1000:.0f}"]

    ours = samples["aistack -p"]
    rows = [[name, *ms([s[0] for s in v]), *ms([s[1] for s in v])] for name, v in samples.items()]
    for floor in ("bare SDK script", "bare SDK script, GC paused"):
        pairs = list(zip(ours, samples[floor], strict=True))
        rows.append([f"aistack -p minus {floor}", *ms([o[0] - b[0] for o, b in pairs]),
                     *ms([o[1] - b[1] for o, b in pairs])])
    return table(
        f"aistack -p round trip vs bare anthropic SDK script, {runs} interleaved rounds "
        "(goal: difference <= +150 ms)",
        ["command", "wall median ms", "wall min ms", "CPU median ms", "CPU min ms"],
        rows,
    )


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
    from aistack_tui.bootstrap import open_session
    from aistack_tui.session.config import make_run_config

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


BENCHES = {
    "startup": bench_startup,
    "prompt": bench_prompt_overhead,
    "round_trip": bench_round_trip,
    "streaming": bench_streaming,
}


def main() -> None:
    """Run the benchmarks named on the command line (default: all), compiled first."""
    names = sys.argv[1:] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        sys.exit(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    # PYTHONDONTWRITEBYTECODE may be set: without .pyc files every run would also time
    # compiling our modules, which no installed copy pays.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", "evals/tasks/",
                    str(ROOT / "aistack_tui")], check=False, capture_output=True)
    print(f"# aistack spine benchmarks ({ROOT.name})")
    for name in names:
        print(BENCHES[name](), flush=True)


if __name__ == "__main__":
    main()
