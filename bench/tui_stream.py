"""TUI benchmark: first frame, a 2,000-message resumed session, and streaming at 500 tok/s.

    python bench/tui_stream.py            # full run (~40 s)
    python bench/tui_stream.py --quick    # 1,000 tokens, 500 messages

For an empty and a 2,000-message resumed session (real app, real session store, the fake
LLM server behind the real SDK) it measures:

- time to first frame (app start → first screen painted, before the session opens) and
  time until the resumed history is on screen;
- a 5,000-token answer fed to the renderer at 500 tokens/s on the app's own event loop:
  * display lag: from a token's due time to the end of the first frame that shows it,
    at 10 %, 50 % and 90 % of the stream, and from the last token to the finished
    answer on screen ("end"). A UI that keeps up has a flat lag; one with a growing
    backlog has a lag growing to seconds;
  * loop lag: how late each token is handed to the renderer (the event loop is busy
    painting), the CPU cost per token and the process's CPU use while streaming;
  * frame time: every screen update (layout + render of what changed) is timed;
- the same stream printed through plain Rich (re-render of the whole markdown at 20
  frames/s, what `rich.live.Live` does) in the same run, as the baseline frame time.

The app runs headless (Textual's test driver): layout and rendering happen as in a
terminal, only the bytes are not written.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import itertools
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import scratch_env, table

from fakes.fake_llm import FakeLLMServer

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
        info = await store.create(repo, "anthropic/claude-sonnet-4-6", title="bench")
        for message in messages:
            await store.append(info.id, message)  # type: ignore[arg-type]
        return info.id
    finally:
        await store.close()


CHECKPOINTS = (0.1, 0.5, 0.9)


def _window(values: list[float], at: float) -> list[float]:
    """The values of the tokens around `at` (a fraction of the stream): ±2.5 %."""
    n = len(values)
    half = max(1, n // 40)
    centre = min(n - 1, int(n * at))
    return values[max(0, centre - half) : centre + half + 1]


class FrameClock:
    """Times every screen update (layout + render of what changed) and notes how much
    of the streamed answer each one put on screen.

    Textual paints from `Screen._on_timer_update`; wrapping it is bench-only
    instrumentation (a private method, so this is the one place to fix on an upgrade).
    """

    def __init__(self) -> None:
        self.frames: list[tuple[float, float, int, bool]] = []  # start, end, shown, frozen
        self.answer: Any = None
        self._original: Any = None

    def install(self) -> None:
        from textual.screen import Screen

        self._original = original = Screen._on_timer_update
        clock = self

        def timed(screen: Screen) -> None:
            start = time.perf_counter()
            original(screen)
            answer = clock.answer
            shown = answer.shown_chars if answer is not None else 0
            frozen = answer is not None and answer.entry.finished
            clock.frames.append((start, time.perf_counter(), shown, frozen))

        Screen._on_timer_update = timed  # type: ignore[method-assign]

    def uninstall(self) -> None:
        from textual.screen import Screen

        Screen._on_timer_update = self._original  # type: ignore[method-assign]

    def shown_at(self, chars: int, after: float) -> float:
        """When the first frame that showed `chars` characters of the answer ended."""
        for start, end, shown, _ in self.frames:
            if start >= after and shown >= chars:
                return end
        return float("nan")

    def frozen_at(self, after: float) -> float:
        for start, end, _, frozen in self.frames:
            if start >= after and frozen:
                return end
        return float("nan")

    def frame_ms(self, start: float, stop: float) -> list[float]:
        return [(e - s) * 1000 for s, e, _, _ in self.frames if start <= s < stop]


async def run_app(repo: Path, resume: str | None, tokens: list[str]) -> dict[str, Any]:
    from aistack_tui.agent import events as ev
    from aistack_tui.session.config import make_run_config
    from aistack_tui.tui.app import AistackApp
    from aistack_tui.tui.widgets.entries import AssistantEntry

    config = make_run_config(cwd=repo, model="anthropic/claude-sonnet-4-6", resume=resume)
    first_frame: list[float] = []

    class TimedApp(AistackApp):
        def on_ready(self) -> None:
            # Textual also calls AistackApp.on_ready (handlers run along the MRO).
            first_frame.append(time.perf_counter() - started)

    clock = FrameClock()
    clock.install()  # before the screen exists: its update timer binds the method
    started = time.perf_counter()
    app = TimedApp(config, None, local_servers=())
    result: dict[str, Any] = {}
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
        try:
            lags: list[float] = []
            cpu: list[float] = []
            dues: list[float] = []
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            for i, token in enumerate(tokens):
                due = t0 + i / TOKEN_RATE
                now = time.perf_counter()
                if due > now:
                    await asyncio.sleep(due - now)
                before = time.perf_counter()
                await renderer.handle(ev.TextDelta(token))
                after = time.perf_counter()
                if clock.answer is None:
                    entry = app.conversation.transcript.entries[-1]
                    assert isinstance(entry, AssistantEntry)
                    clock.answer = app.conversation.widget_of(entry)
                cpu.append(after - before)
                lags.append(after - due)
                dues.append(due)
            stream_end = time.perf_counter()
            await renderer.end_run("completed")  # freezes the answer
            await pilot.pause()
            await pilot.pause(0.05)
            cpu_s = time.process_time() - cpu0
        finally:
            clock.uninstall()
        last_due = dues[-1]
        ends = list(itertools.accumulate(len(t) for t in tokens))
        display = [clock.shown_at(chars, due) - due for chars, due in zip(ends, dues,
                                                                          strict=True)]
        result["display_ms"] = [statistics.mean(_window(display, at)) * 1000
                                for at in CHECKPOINTS]
        result["display_max_ms"] = max(display) * 1000
        result["end_ms"] = (clock.frozen_at(last_due) - last_due) * 1000
        result["lag_first_ms"] = statistics.mean(lags[: len(lags) // 10]) * 1000
        result["lag_last_ms"] = statistics.mean(lags[-len(lags) // 10 :]) * 1000
        result["lag_max_ms"] = max(lags) * 1000
        result["cpu_per_token_us"] = statistics.mean(cpu) * 1e6
        result["cpu_pct"] = cpu_s / (time.perf_counter() - t0) * 100
        result["stream_s"] = stream_end - t0
        span = dues[-1] - dues[0]
        result["frame_ms"] = [
            _mean(clock.frame_ms(t0 + span * (at - 0.025), t0 + span * (at + 0.025)))
            for at in CHECKPOINTS
        ] + [_mean(clock.frame_ms(last_due, float("inf")))]
        result["frames"] = len(clock.frames)
    return result


def _mean(values: list[float]) -> float:
    return statistics.mean(values) if values else float("nan")


def rich_baseline(tokens: list[str]) -> dict[str, Any]:
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
        "frame_ms": [statistics.mean(_window(frames, at)) * 1000 for at in CHECKPOINTS]
        + [frames[-1] * 1000],
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
    resumed: dict[str, Any] | None = None
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
    scenarios = [("empty session", empty)]
    if resumed is not None:
        scenarios.append((f"{n_messages}-message session", resumed))
    print(table(
        f"TUI: {n_tokens} tokens at {TOKEN_RATE:.0f} tok/s (goal: first frame < 400 ms)",
        ["session", "1st frame ms", "ready ms", "widgets", "µs/token", "CPU %",
         "loop lag start ms", "loop lag end ms", "loop lag max ms", "stream s"],
        [[name, f"{r['ttff_ms']:.0f}", f"{r['ready_ms']:.0f}", f"{r['mounted']:.0f}",
          f"{r['cpu_per_token_us']:.0f}", f"{r['cpu_pct']:.0f}", f"{r['lag_first_ms']:.1f}",
          f"{r['lag_last_ms']:.1f}", f"{r['lag_max_ms']:.0f}", f"{r['stream_s']:.1f}"]
         for name, r in scenarios],
    ))
    print(table(
        "Display lag: token due → first frame showing it (mean over ±2.5 % of the stream); "
        "end = last token due → finished answer on screen (goal: flat, no backlog)",
        ["session", "at 10 % ms", "at 50 % ms", "at 90 % ms", "max ms", "end ms"],
        [[name, *(f"{v:.0f}" for v in r["display_ms"]), f"{r['display_max_ms']:.0f}",
          f"{r['end_ms']:.0f}"] for name, r in scenarios],
    ))
    print(table(
        "Frame time (ms) vs plain Rich (Live-style re-render of the whole markdown, "
        "20 frames/s) in the same run",
        ["renderer", "frames", "at 10 %", "at 50 %", "at 90 %", "end"],
        [[f"TUI, {name}", f"{r['frames']}", *(f"{v:.1f}" for v in r["frame_ms"])]
         for name, r in scenarios]
        + [["plain Rich", f"{baseline['frames']}",
            *(f"{v:.1f}" for v in baseline["frame_ms"])]],
    ))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller, faster run")
    asyncio.run(main(parser.parse_args().quick))
    sys.exit(0)
