"""Sandboxed Bash start-up overhead: the same commands plain, read-only tier and write tier.

    python bench/sandbox_overhead.py [--runs 200] [--files 5000]

Each command (`true`, `cat README.md`, `ls`) runs `--runs` times as plain `bash -c`, and
through `BubblewrapSandbox.wrap_command` with the read-only and the write-tier policy that
`ExposurePolicy` builds from a permission engine over a temporary project (secrets, a deny
rule, an Edit deny rule, ~`--files` files). The three forms are interleaved run by run so
drift hits them alike; the plain run is the baseline measured in the same run. Rows for
bare bwrap invocations split the overhead into bwrap's own start, the namespaces and the
mounts. `ExposurePolicy.policy()` is timed on its own: cold (a fresh walk of the project)
and warm (the walk cached for SCAN_TTL_SECONDS). Goal (issue 13): < 15 ms median overhead.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import table

from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleLayer
from aistack_tui.permissions.types import APPROVED_GRANT, READ_ONLY_GRANT, ExecGrant
from aistack_tui.sandbox import BubblewrapSandbox
from aistack_tui.sandbox.bubblewrap import base_flags, find_bwrap, probe_bwrap
from aistack_tui.sandbox.policy import ExposurePolicy

COMMANDS = ["true", "cat README.md", "ls"]
GOAL_MS = 15.0


def make_project(base: Path, files: int) -> tuple[Path, Path]:
    """A project of about `files` files with secrets and a denied directory, and a home."""
    root, home = base / "proj", base / "home"
    per_dir = 100
    for d in range(max(1, files // per_dir)):
        pkg = root / "src" / f"pkg{d:03d}"
        pkg.mkdir(parents=True)
        for f in range(per_dir):
            (pkg / f"mod{f:03d}.py").write_text("x = 1\n")
    (root / "private").mkdir()
    (root / "private" / "notes.txt").write_text("secret\n")
    (root / "config").mkdir()
    (root / "config" / "id_rsa").write_text("key\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    for name, text in (
        ("README.md", "# bench\n" * 50),
        (".env", "K=v\n"),
        ("tls.key", "k\n"),
        ("locked.cfg", "x\n"),
    ):
        (root / name).write_text(text)
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    (home / ".bashrc").write_text("# rc\n")
    return root.resolve(), home.resolve()


def exposure_for(root: Path, home: Path) -> ExposurePolicy:
    engine = PermissionEngine(
        layers=[
            RuleLayer("bench", allow=[], ask=[], deny=["Read(./private/**)", "Edit(./locked.cfg)"])
        ],
        mode="default",
        project_root=root,
        home=home,
    )
    return ExposurePolicy(
        [root],
        home,
        hides=engine.hidden_from_commands,
        freezes=engine.frozen_for_commands,
        rule_roots=engine.denied_roots,
    )


def run(argv: list[str], cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, check=True)


def runner(build: Callable[[], list[str]], cwd: Path) -> Callable[[], None]:
    return lambda: run(build(), cwd)


def tool_path(sandbox: BubblewrapSandbox, grant: ExecGrant, script: list[str], cwd: Path) -> None:
    policy = sandbox.policy_for(grant, cwd)
    run(sandbox.wrap_command(script, cwd=cwd, policy=policy), cwd)
    sandbox.after_command(policy)


def ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return statistics.median(ordered) * 1000, p95 * 1000


def interleaved(forms: dict[str, Callable[[], None]], runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {name: [] for name in forms}
    for fn in forms.values():  # one warm-up each: page cache, first exec of bwrap
        fn()
    for _ in range(runs):
        for name, fn in forms.items():
            start = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--files", type=int, default=5000)
    args = parser.parse_args()
    bwrap = find_bwrap()
    if bwrap is None or probe_bwrap(bwrap, False):
        raise SystemExit(
            f"bubblewrap unavailable: {probe_bwrap(bwrap, False) if bwrap else 'no bwrap'}"
        )

    with tempfile.TemporaryDirectory(prefix="aistack-sandbox-bench-") as tmp:
        root, home = make_project(Path(tmp), args.files)
        sandbox = BubblewrapSandbox([root], bwrap=bwrap, exposure=exposure_for(root, home))

        # The walk, on its own: cold is a fresh ExposurePolicy, warm the cached scan.
        cold = []
        for _ in range(max(5, args.runs // 20)):
            exposure = exposure_for(root, home)
            start = time.perf_counter()
            exposure.policy(READ_ONLY_GRANT, keep_visible=[root])
            cold.append(time.perf_counter() - start)
        warm_exposure = exposure_for(root, home)
        warm_exposure.policy(READ_ONLY_GRANT, keep_visible=[root])
        warm = []
        for _ in range(args.runs):
            start = time.perf_counter()
            warm_exposure.policy(READ_ONLY_GRANT, keep_visible=[root])
            warm.append(time.perf_counter() - start)
        read_policy = sandbox.policy_for(READ_ONLY_GRANT, root)
        write_policy = sandbox.policy_for(APPROVED_GRANT, root)

        rows: list[list[str]] = []
        worst = write_path = 0.0
        for command in COMMANDS:
            script = ["bash", "-c", command]
            forms: dict[str, Callable[[], None]] = {
                "plain bash -c": runner(lambda s=script: s, root),
                # wrap_command is timed too: it is per-command work (a stat per mount).
                "read tier": runner(
                    lambda s=script: sandbox.wrap_command(s, cwd=root, policy=read_policy), root
                ),
                "write tier": runner(
                    lambda s=script: sandbox.wrap_command(s, cwd=root, policy=write_policy), root
                ),
            }
            if command == "true":
                bare = [bwrap, "--ro-bind", "/", "/"]
                for name, argv in (
                    ("bwrap --ro-bind / / only", [*bare, "--", *script]),
                    ("+ --unshare-all", [*bare, "--unshare-all", "--", *script]),
                    ("bwrap base flags", [bwrap, *base_flags(False), "--", *script]),
                ):
                    forms[name] = runner(lambda a=argv: a, root)
            samples = interleaved(forms, args.runs)
            if command == "true":
                # The Bash tool in a session: the model's turn (seconds) passes between two
                # commands, and the walk after_command started runs during it.
                for name, grant in (
                    ("read tier, tool path, turn between", READ_ONLY_GRANT),
                    ("write tier, tool path, turn between", APPROVED_GRANT),
                ):
                    own = BubblewrapSandbox([root], bwrap=bwrap,
                                            exposure=exposure_for(root, home))
                    assert own.exposure is not None
                    values: list[float] = []
                    for _ in range(args.runs):
                        own.exposure.settle()
                        start = time.perf_counter()
                        tool_path(own, grant, script, root)
                        values.append(time.perf_counter() - start)
                    samples[name] = values
            base_median, _ = ms(samples["plain bash -c"])
            for name, values in samples.items():
                median, p95 = ms(values)
                extra = "" if name == "plain bash -c" else f"{median - base_median:+.2f}"
                if name in ("read tier", "write tier") or name.endswith("turn between"):
                    worst = max(worst, median - base_median)
                if name == "write tier, tool path, turn between":
                    write_path = median - base_median
                rows.append([command, name, f"{median:.2f}", f"{p95:.2f}", extra])

        print(f"project: {args.files} files, {args.runs} runs per row, bwrap {bwrap}")
        print(
            f"read tier: {len(read_policy.hidden)} masks; write tier: "
            f"{len(write_policy.hidden)} masks, {len(write_policy.frozen)} frozen"
        )
        print(
            table(
                "Sandboxed Bash start-up (ms)",
                ["command", "form", "median", "p95", "overhead vs plain"],
                rows,
            )
        )
        cold_med, cold_p95 = ms(cold)
        warm_med, warm_p95 = ms(warm)
        print(
            table(
                "ExposurePolicy.policy() (ms)",
                ["walk", "median", "p95", "runs"],
                [
                    ["cold (fresh walk)", f"{cold_med:.2f}", f"{cold_p95:.2f}", str(len(cold))],
                    ["warm (cached)", f"{warm_med:.3f}", f"{warm_p95:.3f}", str(len(warm))],
                ],
            )
        )
        verdict = "meets" if worst < GOAL_MS else "MISSES"
        print(
            f"\nworst median overhead {worst:.2f} ms per command with the walk cached: "
            f"{verdict} the {GOAL_MS:.0f} ms goal.\nA write-tier command as the Bash tool "
            f"runs it (the walk after each command done while the model thinks) adds "
            f"{write_path:.1f} ms; a command that has to walk first (the first one, or one "
            f"right after another) pays the cold walk, {cold_med:.1f} ms."
        )


if __name__ == "__main__":
    main()
