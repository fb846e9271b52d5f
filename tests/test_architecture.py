"""Architecture rules that must hold as the code grows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_core_never_imports_textual_or_rich() -> None:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_version_imports_no_sdk() -> None:
    """`aistack --version` must stay fast: no provider SDK, no Textual, no SQLite."""
    code = (
        "import sys; from aistack_tui.cli.main import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('anthropic', 'openai', 'google.genai', 'textual', 'aiosqlite', "
        "'mcp', 'pydantic') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "aistack " in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "HEAVY=", proc.stdout


def _graph():  # the import graph of the package, TYPE_CHECKING imports included
    import grimp

    return grimp.build_graph("aistack_tui", include_external_packages=False)


def test_no_import_cycle_in_the_package() -> None:
    """Every import points one way: a cycle (even a function-level or TYPE_CHECKING one)
    means two modules are really one, or a value type sits in the wrong layer."""
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iteratively
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert cycles == [], f"import cycles: {cycles}"


FRONT_ENDS = ("aistack_tui.tui", "aistack_tui.print_mode", "aistack_tui.linemode",
              "aistack_tui.channels")
CORE_PACKAGES = ("aistack_tui.agent", "aistack_tui.permissions", "aistack_tui.tools")
VALUE_MODULES = {
    "aistack_tui.agent.events",  # the event union front ends consume
    "aistack_tui.agent.ports",  # ApprovalRequest / ApprovalDecision and the approver port
    "aistack_tui.permissions.types",  # PermissionMode, PermissionDenial, Decision
    "aistack_tui.tools.diffs",  # structured diffs shown in approvals and cards
}


def core_reaches(graph) -> list[str]:
    """Imports from a front end into the core that are not event or value types."""
    reaches: list[str] = []
    for front_end in FRONT_ENDS:
        if front_end not in graph.modules:
            continue
        for module in sorted({front_end, *graph.find_descendants(front_end)}):
            for imported in sorted(graph.find_modules_directly_imported_by(module)):
                if imported.startswith(CORE_PACKAGES) and imported not in VALUE_MODULES:
                    reaches.append(f"{module} -> {imported}")
    return reaches


def test_front_ends_use_the_session_facade_not_the_core() -> None:
    """The TUI, print mode and the line mode reach the agent, the permission engine and
    the tools only through `LiveSession`: from those packages they import event and
    value types, nothing else."""
    assert core_reaches(_graph()) == []


def test_the_front_end_rule_catches_a_reach_into_the_core() -> None:
    """The rule is live: one import of the agent's runtime from the TUI breaks it."""
    graph = _graph()
    graph.add_import(
        importer="aistack_tui.tui.bridge", imported="aistack_tui.agent.runtime",
        line_number=1, line_contents="from aistack_tui.agent.runtime import Agent",
    )
    assert core_reaches(graph) == ["aistack_tui.tui.bridge -> aistack_tui.agent.runtime"]


def _event_matches(tree) -> list:
    """`match` statements whose cases name agent events (`case ev.TextDelta(...)`)."""
    import ast

    def names_an_event(pattern: ast.AST) -> bool:
        return any(
            isinstance(node, ast.MatchClass)
            and isinstance(node.cls, ast.Attribute)
            and isinstance(node.cls.value, ast.Name)
            and node.cls.value.id == "ev"
            for node in ast.walk(pattern)
        )

    return [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Match) and any(names_an_event(c.pattern) for c in node.cases)
    ]


def _ends_with_assert_never(match) -> bool:
    import ast

    last = match.cases[-1]
    wildcard = isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None
    calls = [
        n for n in ast.walk(last) if isinstance(n, ast.Call)
        and getattr(n.func, "id", getattr(n.func, "attr", "")) == "assert_never"
    ]
    return wildcard and bool(calls)


def test_every_match_over_agent_events_is_exhaustive() -> None:
    """A new event type must fail type checking wherever a consumer dispatches on events:
    each such `match` ends with `case _: assert_never(event)`."""
    import ast

    open_ended: list[str] = []
    for path in sorted((ROOT / "aistack_tui").rglob("*.py")):
        if "evals/tasks" in path.as_posix():
            continue  # fixture repositories for `aistack eval`, some broken on purpose
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for match in _event_matches(tree):
            if not _ends_with_assert_never(match):
                open_ended.append(f"{path.relative_to(ROOT)}:{match.lineno}")
    assert open_ended == []


def test_the_exhaustiveness_check_sees_an_open_match() -> None:
    import ast

    source = (
        "match event:\n    case ev.TextDelta(text=t):\n        pass\n"
        "    case _:\n        pass\n"
    )
    closed = source.replace("    case _:\n        pass\n", "    case _:\n        assert_never(event)\n")
    assert [_ends_with_assert_never(m) for m in _event_matches(ast.parse(source))] == [False]
    assert [_ends_with_assert_never(m) for m in _event_matches(ast.parse(closed))] == [True]


STRICT_PACKAGES = ("agent", "session", "permissions", "llm")


def test_the_core_packages_type_check_clean_in_strict_mode() -> None:
    """pyright strict on the packages that hold the contracts: an `AgentEvent` a consumer
    forgot fails at its `assert_never`, and untyped JSON or SDK data cannot leak in."""
    import json
    import os
    import shutil
    import tomllib

    import pytest

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    strict = config["tool"]["pyright"]["strict"]
    paths = [f"aistack_tui/{name}" for name in STRICT_PACKAGES]
    assert set(paths) <= set(strict), "the strict list in pyproject.toml lost a package"
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent)) or shutil.which(
        "pyright"
    )
    if pyright is None:
        pytest.skip("pyright is not installed: pip install -e '.[test]'")
    proc = subprocess.run(
        [pyright, "--outputjson", "--pythonpath", sys.executable, *paths],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
    )
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        if "node" in proc.stderr.lower():  # the wrapper found no node.js to run pyright on
            pytest.skip(f"pyright cannot start node.js: {proc.stderr.strip()[-500:]}")
        raise AssertionError(
            f"pyright did not report: {proc.stdout[-2000:]}{proc.stderr}"
        ) from None
    errors = [
        f"{Path(d['file']).relative_to(ROOT)}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"] if d["severity"] == "error"
    ]
    assert report["summary"]["filesAnalyzed"] > 50
    assert errors == [], "\n".join(errors)
