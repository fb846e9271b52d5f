"""The bypass corpus: hundreds of commands and paths other agents got wrong, as data files.

The hard requirement is zero cases where the engine allows and the corpus expects ask or
deny; every other mismatch fails too, so expectations stay exact.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from aistack_tui.permissions.engine import request_for_test
from aistack_tui.permissions.types import PermissionRequest

from .conftest import World

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


def test_corpus_has_no_unsafe_allow_and_matches_expectations(world: World) -> None:
    cases = load_corpus()
    assert len(cases) >= 300
    unsafe: list[str] = []
    mismatched: list[str] = []
    by_class: Counter[str] = Counter()
    for case in cases:
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
