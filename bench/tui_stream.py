"""TUI benchmark: first frame, a 2,000-message resumed session, and streaming at 500 tok/s.

    python bench/tui_stream.py            # full run (~40 s)
    python bench/tui_stream.py --quick    # 1,000 tokens, 500 messages

For an empty and a 2,000-message resumed session (real app, real session store, the fake
LLM server behind the real SDK) it measures:

- time to first frame (app start → first screen painted, before the session opens) and
  time until the resumed history is on screen;
- a 5,000-token answer fed to the renderer at 500 tokens/s on the app's own event loop:
  the lag of each token behind its schedule (a UI that keeps up has a flat, small lag; one
  that does not has a lag growing to seconds), and the CPU cost per token;
- the same stream printed through plain Rich (`Live` + `Markdown` at 20 frames/s) in the
  same run, as the baseline frame time.

The app runs headless (Textual's test driver): layout and rendering happen as in a
terminal, only the bytes are not written.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import sys
import time
from pathlib import Path

from _common import scratch_env, table

from tests.fakes.fake_llm import FakeLLMServer

TOKEN = "word "  # about one token
TOKEN_RATE = 500.0


def answer_tokens(n: int) -> list[str]:
    """A markdown answer cut into tokens: prose, a list, a table and code blocks."""
    parts: list[str] = []
    i = 0
    while len(parts) < n:
        i += 1
        block = (
            f"\n\n## Step {i}\n\nThis paragraph explains step {i} in enough words to wrap "
            f"across the terminal width a couple of times. " * 2
            + f"\n\n- item {i}.1\n- item {i}.2\n\n| a | b |\n|---|---|\n| {i} | {i * 2} |\n\n"
            + f"```python\ndef step_{i}(x):\n    return x * {i}\n```\n"
        )
        parts += [w + " " for w in block.split(" ")]
    return parts[:n]


def history(n: int) -> list[object]:
    from aistack_tui.llm import types as lt

    messages: list[object] = []
    for i in range(n // 2):
        messages.append(lt.Message.user(f"question {i}: how does part {i} work?"))
        messages.append(lt.Message(role="assistant", content=[lt.TextBlock(
            text=f"Part {i} works like this:\n\n```python\nprint({i})\n```\n\nand **that** is it."
        )]))
    return messages


async def make_session(repo: Path, home: Path, messages: list[object]) -> str:
    from aistack_tui.sessions.sqlite_store import open_session_store

    store = await open_session_store(home)
    try:
        info = await store.create(repo, "anthropic/claude-sonnet-4-5", title="bench")
        for message in messages:
            await store.append(info.id, message)  # type: ignore[arg-type]
        return info.id
    finally:
        await store.close()


async def run_app(repo: Path, resume: str | None, tokens: list[str]) -> dict[str, float]:
    from aistack_tui.agent import events as ev
    from aistack_tui.bootstrap import make_run_config
    from aistack_tui.tui.app import AistackApp

    config = make_run_config(cwd=repo, model="anthropic/claude-sonnet-4-5", resume=resume)
    first_frame: list[float] = []

    class TimedApp(AistackApp):
        def on_ready(self) -> None:
            # Textual also calls AistackApp.on_ready (handlers run along the MRO).
            first_frame.append(time.perf_counter() - started)

    started = time.perf_counter()
    app = TimedApp(config, None, local_servers=())
    result: dict[str, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        while app.session is None:
            await pilot.pause(0.01)
        await pilot.pause()
        result["ttff_ms"] = first_frame[0] * 1000
        result["ready_ms"] = (time.perf_counter() - started) * 1000
        result["mounted"] = app.conversation.mounted_count
        renderer = app.renderer
        assert renderer is not None
        await renderer.handle(ev.TurnStarted(1, "anthropic", "bench"))
        lags: list[float] = []
        cpu: list[float] = []
        t0 = time.perf_counter()
        for i, token in enumerate(tokens):
            due = t0 + i / TOKEN_RATE
            now = time.perf_counter()
            if due > now:
                await asyncio.sleep(due - now)
            before = time.perf_counter()
            await renderer.handle(ev.TextDelta(token))
            after = time.perf_counter()
            cpu.append(after - before)
            lags.append(after - due)
        stream_end = time.perf_counter()
        await renderer.end_run("completed")  # drains the markdown stream, then freezes
        caught_up = time.perf_counter()
        result["lag_first_ms"] = statistics.mean(lags[: len(lags) // 10]) * 1000
        result["lag_last_ms"] = statistics.mean(lags[-len(lags) // 10 :]) * 1000
        result["lag_max_ms"] = max(lags) * 1000
        result["cpu_per_token_us"] = statistics.mean(cpu) * 1e6
        result["catch_up_ms"] = (caught_up - stream_end) * 1000
        result["stream_s"] = stream_end - t0
    return result


def rich_baseline(tokens: list[str]) -> dict[str, float]:
    """The same stream through plain Rich: re-render the markdown 20 times a second."""
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(file=io.StringIO(), width=120, force_terminal=True, color_system="truecolor")
    frames: list[float] = []
    text = ""
    per_frame = max(1, int(TOKEN_RATE / 20))
    for i, token in enumerate(tokens):
        text += token
        if i % per_frame == 0 or i == len(tokens) - 1:
            start = time.perf_counter()
            with console.capture():
                console.print(Markdown(text))
            frames.append(time.perf_counter() - start)
    return {
        "frame_first_ms": statistics.mean(frames[:5]) * 1000,
        "frame_last_ms": statistics.mean(frames[-5:]) * 1000,
        "frames": len(frames),
    }


async def main(quick: bool) -> None:
    n_tokens = 1000 if quick else 5000
    n_messages = 500 if quick else 2000
    tokens = answer_tokens(n_tokens)
    env, repo = scratch_env()
    os.environ.update(env)
    os.environ.pop("NO_COLOR", None)
    home = Path(env["AISTACK_HOME"])
    server = FakeLLMServer().start()
    os.environ.update(server.env("anthropic"))
    resumed: dict[str, float] | None = None
    try:
        empty = await run_app(repo, None, tokens)
        try:
            session_id = await make_session(repo, home, history(n_messages))
            resumed = await run_app(repo, session_id, tokens)
        except Exception as e:  # report what could be measured
            print(f"resumed-session scenario failed: {type(e).__name__}: {e}", file=sys.stderr)
    finally:
        server.stop()
    baseline = rich_baseline(tokens)
    rows = []
    scenarios = [("empty session", empty)]
    if resumed is not None:
        scenarios.append((f"{n_messages}-message session", resumed))
    for name, r in scenarios:
        rows.append([
            name, f"{r['ttff_ms']:.0f}", f"{r['ready_ms']:.0f}", f"{r['mounted']:.0f}",
            f"{r['cpu_per_token_us']:.0f}", f"{r['lag_first_ms']:.1f}",
            f"{r['lag_last_ms']:.1f}", f"{r['lag_max_ms']:.0f}", f"{r['catch_up_ms']:.0f}",
            f"{r['stream_s']:.1f}",
        ])
    print(table(
        f"TUI: {n_tokens} tokens at {TOKEN_RATE:.0f} tok/s (goal: first frame < 400 ms, "
        "flat lag)",
        ["session", "1st frame ms", "ready ms", "widgets", "µs/token", "lag start ms",
         "lag end ms", "lag max ms", "catch-up ms", "stream s"],
        rows,
    ))
    print(table(
        "Plain Rich baseline: Live-style re-render of the whole markdown at 20 frames/s",
        ["frames", "frame ms (start)", "frame ms (end)"],
        [[f"{baseline['frames']:.0f}", f"{baseline['frame_first_ms']:.1f}",
          f"{baseline['frame_last_ms']:.1f}"]],
    ))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller, faster run")
    asyncio.run(main(parser.parse_args().quick))
    sys.exit(0)
