"""Architecture rules that must hold as the code grows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.python_ast import parse_source

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


FRONT_END_RULE = "Front ends import from agent/, permissions/ and tools/ only event and value types"


def _front_end_contract() -> dict:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == FRONT_END_RULE)


def test_front_ends_use_the_session_facade_not_the_core() -> None:
    """The TUI, print mode, the line mode and the channels reach the agent, the permission
    engine and the tools only through `LiveSession`: the import-linter contract (kept, as
    `lint-imports` above checks) covers every front end and the whole of the core."""
    contract = _front_end_contract()
    assert contract["type"] == "forbidden"
    assert set(contract["source_modules"]) == {
        "aistack_tui.tui", "aistack_tui.print_mode", "aistack_tui.linemode",
        "aistack_tui.channels",
    }
    assert set(contract["forbidden_modules"]) == {
        "aistack_tui.agent", "aistack_tui.permissions", "aistack_tui.tools",
    }


def test_the_front_end_rule_catches_a_reach_into_the_core(tmp_path: Path) -> None:
    """The rule is live: in a package shaped like ours, one import of the agent's runtime
    from the TUI breaks the contract, and imports of the value modules do not."""
    import json

    package = tmp_path / "shaped"
    for module in ("tui/bridge", "tui/app", "print_mode/runner", "linemode/repl",
                   "channels/bus", "agent/events", "agent/ports", "agent/runtime",
                   "permissions/types", "tools/diffs"):
        path = package / f"{module}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.touch()
    (package / "__init__.py").touch()
    (package / "tui" / "app.py").write_text("import shaped.agent.events\n")
    (package / "print_mode" / "runner.py").write_text("import shaped.agent.ports\n")
    (package / "linemode" / "repl.py").write_text("import shaped.permissions.types\n")
    (package / "channels" / "bus.py").write_text("import shaped.tools.diffs\n")
    (package / "tui" / "bridge.py").write_text("import shaped.agent.runtime\n")
    contract = json.loads(json.dumps(_front_end_contract()).replace("aistack_tui", "shaped"))
    lines = ["[importlinter]", "root_package = shaped", "", "[importlinter:contract:front]"]
    for key, value in contract.items():
        items = value if isinstance(value, list) else [value]
        lines.append(f"{key} = " + "\n    ".join(str(v) for v in items))
    config = tmp_path / ".importlinter"
    config.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), str(config), "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": str(Path(sys.executable).parent)},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "shaped.tui.bridge -> shaped.agent.runtime" in proc.stdout
    for allowed in ("tui.app", "print_mode.runner", "linemode.repl", "channels.bus"):
        assert f"shaped.{allowed} ->" not in proc.stdout


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

    open_ended: list[str] = []
    for path in sorted((ROOT / "aistack_tui").rglob("*.py")):
        if "evals/tasks" in path.as_posix():
            continue  # fixture repositories for `aistack eval`, some broken on purpose
        tree = parse_source(path.read_text(encoding="utf-8"))
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
