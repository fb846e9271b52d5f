"""Shared helpers for the benchmarks: timing, tables, a temporary home and repo."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def timed_runs(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def summary_ms(samples: list[float]) -> tuple[float, float]:
    """(median, p90) in milliseconds."""
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return statistics.median(ordered) * 1000, p90 * 1000


def table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    line = "  ".join("-" * w for w in widths)
    out = [f"\n## {title}", "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=False)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)) for r in rows]
    return "\n".join(out)


def scratch_env() -> tuple[dict[str, str], Path]:
    """An environment with a fresh AISTACK_HOME and a temp git repo as working dir."""
    base = Path(tempfile.mkdtemp(prefix="aistack-bench-"))
    home = base / "home"
    repo = base / "repo"
    home.mkdir()
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["AISTACK_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT)
    return env, repo
