"""The bypass corpus: hundreds of commands and paths other agents got wrong, as data files.

The hard requirement is zero cases where the engine allows and the corpus expects ask or
deny; every other mismatch fails too, so expectations stay exact.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from aistack_tui.permissions.engine import request_for_test
from aistack_tui.permissions.types import PermissionRequest

from .conftest import World, make_world

CORPUS = Path(__file__).parent / "corpus"


def load_corpus() -> list[dict[str, Any]]:
    cases = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                case = json.loads(line)
                case["where"] = f"{path.name}:{n}"
                cases.append(case)
    return cases


def _request(case: dict[str, Any], world: World) -> PermissionRequest:
    test: dict[str, Any] = {"tool": case["tool"]}
    if "command" in case:
        test["command"] = world.fill(case["command"])
    if "input" in case:
        test["input"] = {
            k: world.fill(v) if isinstance(v, str) else v for k, v in case["input"].items()
        }
    return request_for_test(test)


def _prepared_world(case: dict[str, Any], world: World, tmp_path: Path) -> World:
    """The shared world, or a fresh one where the case's proof needs files set up first:
    the engine judges the file system the command would really run against."""
    setup = (case.get("proof") or {}).get("setup")
    if not setup:
        return world
    fresh = make_world(tmp_path / f"case-{abs(hash(case['where']))}")
    subprocess.run(["bash", "-c", setup], cwd=fresh.root, check=True, capture_output=True,
                   env=_proof_env(fresh))
    return fresh


def _proof_env(world: World) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(world.home), "AISTACK_PROOF": "proof-token",
            "LC_ALL": "C"}


def test_corpus_has_no_unsafe_allow_and_matches_expectations(
    world: World, tmp_path: Path
) -> None:
    cases = load_corpus()
    assert len(cases) >= 400
    unsafe: list[str] = []
    mismatched: list[str] = []
    by_class: Counter[str] = Counter()
    for case in cases:
        world = _prepared_world(case, world, tmp_path) if case.get("proof") else world
        engine = world.engine(
            case["allow"], case["ask"], case["deny"], mode=case["mode"], cwd=world.root
        )
        decision = engine.check(_request(case, world))
        by_class[case["class"]] += 1
        label = (
            f"{case['where']} [{case['class']}] {case['tool']} "
            f"{case.get('command', case.get('input'))!r:.120} mode={case['mode']}: "
            f"expected {case['expect']}, got {decision.behavior} ({decision.reason})"
        )
        if decision.behavior == "allow" and case["expect"] != "allow":
            unsafe.append(label)
        elif decision.behavior != case["expect"]:
            mismatched.append(label)
    summary = ", ".join(f"{k}={v}" for k, v in sorted(by_class.items()))
    print(
        f"\npermission corpus: {len(cases)} cases ({summary}); unsafe allows: {len(unsafe)}; "
        f"other mismatches: {len(mismatched)}"
    )
    assert not unsafe, "engine allowed what must ask or deny:\n" + "\n".join(unsafe)
    assert not mismatched, "\n".join(mismatched)


def _proven_cases() -> list[dict[str, Any]]:
    return [
        c for c in load_corpus()
        if c.get("proof") and ("created" in c["proof"] or "stdout" in c["proof"])
    ]


def test_every_escape_with_a_proof_is_real_when_run_directly(tmp_path: Path) -> None:
    """Each escape counts only if running it straight in bash, in a throwaway world, has
    the effect it claims (creates the marker, or prints the protected data)."""
    cases = _proven_cases()
    assert len(cases) >= 100
    not_real: list[str] = []
    for n, case in enumerate(cases):
        world = make_world(tmp_path / f"proof-{n}")
        env = _proof_env(world)
        proof = case["proof"]
        if proof.get("setup"):
            subprocess.run(["bash", "-c", proof["setup"]], cwd=world.root, check=True,
                           capture_output=True, env=env)
        run = subprocess.run(["bash", "-c", world.fill(case["command"])], cwd=world.root,
                             capture_output=True, text=True, env=env, timeout=20, check=False)
        created = proof.get("created")
        if created and not (world.root / created).exists():
            not_real.append(f"{case['where']} {case['command']!r}: {created} not created")
        wanted = proof.get("stdout")
        if wanted and wanted not in run.stdout + run.stderr:
            not_real.append(f"{case['where']} {case['command']!r}: printed no {wanted!r}")
    assert not not_real, "\n".join(not_real)
