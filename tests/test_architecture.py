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
