"""The code index never shows what Read may not: agent config, secrets, symlinks out of the
project, and files the session's permission engine refuses (checked at query time)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aistack_tui.knowledge import KnowledgeIndex
from aistack_tui.knowledge.pipeline import ParseJob, parse_batch
from aistack_tui.knowledge.walker import never_indexed, walk
from aistack_tui.permissions.access import read_allowed
from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleLayer


def _write(root: Path, rel: str, content: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)


def _code(name: str, token: str) -> str:
    return f'{name.upper()}_VALUE = "{token}"\n\n\ndef {name}_holder():\n    return 1\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    outside = tmp_path / "outside"
    _write(root, "src/app.py", _code("public", "PUBLIC-1111"))
    _write(root, "private/notes.py", _code("private", "PRIVATE-2222"))
    _write(outside, "leak.py", _code("outside", "OUTSIDE-3333"))
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "linked_leak.py").symlink_to(outside / "leak.py")
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    _write(root, ".git/config", "[core]\n")
    (root / "gitcfg.sh").symlink_to(root / ".git" / "config")
    _write(root, ".claude/agents/helper.md", "# helper CLAUDE-4444\n")
    _write(root, "pkg/.agents/skills/x/SKILL.md", "# skill AGENTS-5555\n")
    _write(root, ".mcp.json", '{"mcpServers": {}}')
    _write(root, "credentials.json", '{"key": "CRED-6666"}')
    _write(root, ".env.sh", "export KEY=ENV-7777\n")
    return root


@pytest.mark.parametrize(
    ("rel", "hidden"),
    [
        (".claude/agents/a.md", True),
        ("sub/.agents/skills/s/SKILL.md", True),
        (".aistack/settings.json", True),
        (".git/config", True),
        (".mcp.json", True),
        ("pkg/.mcp.json", True),
        ("credentials.json", True),
        (".env.production.sh", True),
        ("keys/server.pem", True),
        ("src/app.py", False),
        ("docs/claude.md", False),
        ("src/secrets.py", False),
    ],
)
def test_never_indexed(rel: str, hidden: bool) -> None:
    assert never_indexed(rel) is hidden


def test_walk_skips_agent_config_secrets_and_symlinks_out(project: Path) -> None:
    found = sorted(e.path for e in walk(project))
    assert found == ["alias.py", "private/notes.py", "src/app.py"]


def test_parse_worker_refuses_a_file_swapped_for_a_symlink_out(project: Path) -> None:
    (project / "src" / "app.py").unlink()
    (project / "src" / "app.py").symlink_to(project.parent / "outside" / "leak.py")
    job = ParseJob("src/app.py", "python", 10, 0, "")
    [outcome] = parse_batch(str(project), [job], 0)
    assert outcome.status == "skipped"


def test_parse_worker_refuses_a_file_swapped_for_a_fifo_without_waiting(project: Path) -> None:
    """Opening a FIFO for reading waits for a writer: the worker would hang for good."""
    (project / "src" / "app.py").unlink()
    os.mkfifo(project / "src" / "app.py")
    job = ParseJob("src/app.py", "python", 10, 0, "")
    done: list[str] = []
    worker = threading.Thread(
        target=lambda: done.extend(o.status for o in parse_batch(str(project), [job], 0)),
        daemon=True,
    )
    worker.start()
    worker.join(10)
    assert done == ["skipped"]


def test_parse_worker_reads_a_link_inside_but_not_one_into_agent_config(project: Path) -> None:
    """The check is made on the file as opened: a link to a project file is that file,
    a link into .git/ is refused however its own name looks."""
    jobs = [ParseJob(p, "python", 10, 0, "") for p in ("alias.py", "gitcfg.sh", "src/app.py")]
    outcomes = parse_batch(str(project), jobs, 0)
    assert [o.status for o in outcomes] == ["parsed", "skipped", "parsed"]
    assert outcomes[0].parsed is not None and outcomes[2].parsed is not None
    assert outcomes[0].parsed.hash == outcomes[2].parsed.hash


@pytest.fixture
async def index(project: Path, aistack_home: Path) -> AsyncIterator[KnowledgeIndex]:
    idx = await KnowledgeIndex.open(aistack_home, project)
    await idx.refresh()
    await idx.wait_for_graph()
    yield idx
    await idx.close()


def _engine(project: Path, deny: list[str]) -> PermissionEngine:
    return PermissionEngine(
        layers=[RuleLayer("test", deny=deny)],
        mode="default",
        project_root=project,
        home=project.parent,
    )


async def _everything(idx: KnowledgeIndex) -> str:
    hits = await idx.search("holder value", 30)
    block = await idx.context_block(
        "public_holder private_holder outside_holder", ["private/notes.py"], 4000
    )
    return "\n".join(f"{h.path}\n{h.snippet}" for h in hits) + "\n" + block


async def test_deny_rule_added_after_indexing_hides_the_file_at_query_time(
    index: KnowledgeIndex, project: Path
) -> None:
    before = await _everything(index)
    assert "PRIVATE-2222" in before  # indexed while no rule covered it
    index.read_allowed = read_allowed(_engine(project, ["Read(./private/**)"]))
    after = await _everything(index)
    assert "PUBLIC-1111" in after
    assert "PRIVATE-2222" not in after
    assert "private/notes.py" not in after
    assert "private_holder" not in after  # not in the repo map either


async def test_file_that_now_resolves_outside_is_dropped_from_an_old_index(
    index: KnowledgeIndex, project: Path
) -> None:
    assert "PUBLIC-1111" in await _everything(index)
    (project / "src" / "app.py").unlink()
    (project / "src" / "app.py").symlink_to(project.parent / "outside" / "leak.py")
    shown = await _everything(index)
    assert "PUBLIC-1111" not in shown
    assert "src/app.py" not in shown.replace("alias.py", "")


async def test_a_failing_read_check_hides_rather_than_shows(
    index: KnowledgeIndex,
) -> None:
    def broken(path: Path) -> bool:
        raise RuntimeError("boom")

    index.read_allowed = broken
    assert await index.search("holder value", 30) == []


async def test_nothing_hidden_is_indexed(index: KnowledgeIndex) -> None:
    rows = await index.store.db.execute_fetchall("SELECT path FROM files ORDER BY path")
    assert [r[0] for r in rows] == ["alias.py", "private/notes.py", "src/app.py"]


def test_a_file_swapped_with_a_link_to_a_secret_while_it_is_read_never_yields_it(
    tmp_path: Path,
) -> None:
    """A command loops swapping `a.py` between a plain file and a link to `.env`. Checked
    by name and then opened by name, the secret was read as `a.py` (158 times in 5 s
    here) and would have gone to the model under that harmless name; checked on the file
    as opened, never. Resolving the name mid-swap also raised out of the worker."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".env").write_text("API_KEY=TOPSECRET\n")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            (root / "plain").write_text("print('hi')\n")
            os.replace(root / "plain", root / "a.py")
            (root / "link").unlink(missing_ok=True)
            (root / "link").symlink_to(".env")
            os.replace(root / "link", root / "a.py")

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    read = leaked = 0
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            for outcome in parse_batch(str(root), [ParseJob("a.py", "python", 0, 0, "")] * 50, 0):
                read += outcome.status == "parsed"
                chunks = outcome.parsed.extraction.chunk_rows() if outcome.parsed else ()
                leaked += any("TOPSECRET" in row[4] for row in chunks)
    finally:
        stop.set()
        swapper.join()
    assert read > 0, "the plain file was never read: the race was not run"
    assert leaked == 0


def test_a_file_is_read_whole_when_it_grew_after_its_size_was_read(tmp_path: Path) -> None:
    """The read asks for the size `fstat` gave; a file longer by then is still read to
    its end, and an empty one reads as empty."""
    from aistack_tui.knowledge.pipeline import _read_all

    grown = tmp_path / "grown.py"
    grown.write_bytes(b"x = 1\n" * 50_000)
    empty = tmp_path / "empty.py"
    empty.write_bytes(b"")
    for path, stale_size in ((grown, 10), (grown, 0), (empty, 0)):
        fd = os.open(path, os.O_RDONLY)
        try:
            assert _read_all(fd, stale_size) == path.read_bytes()
        finally:
            os.close(fd)
