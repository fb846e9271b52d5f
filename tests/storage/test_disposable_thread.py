"""Work on a disposable thread: awaited like `to_thread`, but process exit never waits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from aistack_tui.storage.disposable_thread import run_disposable


async def test_the_result_and_the_error_reach_the_caller() -> None:
    assert await run_disposable(lambda: 6 * 7) == 42

    def fail() -> None:
        raise ValueError("bad rows")

    with pytest.raises(ValueError, match="bad rows"):
        await run_disposable(fail)


def test_exit_does_not_wait_for_abandoned_work() -> None:
    script = textwrap.dedent("""
        import asyncio, time
        from aistack_tui.storage.disposable_thread import run_disposable

        async def main():
            task = asyncio.ensure_future(run_disposable(lambda: time.sleep(30)))
            await asyncio.sleep(0.2)
            task.cancel()

        asyncio.run(main())
        print("done")
    """)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=20)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done" and done.stderr == ""
    assert time.monotonic() - started < 10, "exit waited for the abandoned work"
