"""NotebookEdit through a real session: the permission check judges the notebook,
acceptEdits lets it through like Edit, a checkpoint is taken before it, and undo brings
the notebook back byte for byte."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

import nbformat

from aistack_tui.agent.ports import DenyAll
from aistack_tui.bootstrap import open_session
from aistack_tui.cli.commands import undo
from aistack_tui.session.config import make_run_config
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.e2e.helpers import FAST_RETRY, write_user_settings

NOTEBOOK = Path(__file__).parent / "notebooks" / "analysis.ipynb"


async def test_notebook_edit_is_checkpointed_and_undone(git_repo: Path,
                                                        aistack_home: Path) -> None:
    write_user_settings(aistack_home, FAST_RETRY)
    shutil.copy(NOTEBOOK, git_repo / "analysis.ipynb")
    script = [
        Turn(tool_calls=[ToolCall("Read", {"file_path": "analysis.ipynb"})]),
        Turn(tool_calls=[ToolCall("NotebookEdit", {
            "notebook_path": "analysis.ipynb", "cell_id": "total",
            "new_source": "total = sum(v for _, v in rows)\nprint(total)"})]),
        Turn(text="Done."),
    ]
    with FakeLLMServer(script) as server:
        config = make_run_config(
            cwd=git_repo, env={**os.environ, **server.env("anthropic")},
            model="anthropic/claude-sonnet-4-6", permission_mode="acceptEdits")
        session = await open_session(config, DenyAll())
        manager = session.checkpoints
        assert manager is not None
        try:
            async for _ in session.agent.run("print the total"):
                pass
        finally:
            await session.close()
        told = str(server.model_requests[2].body["messages"][-1])
    assert "Replaced cell total (index 2)" in told
    edited = nbformat.read(git_repo / "analysis.ipynb", as_version=nbformat.NO_CONVERT)
    nbformat.validate(edited)
    assert edited.cells[2].source == "total = sum(v for _, v in rows)\nprint(total)"

    parser = argparse.ArgumentParser()
    undo.register(parser.add_subparsers(dest="command"))
    assert await undo.run(parser.parse_args(["undo"]), make_run_config(cwd=git_repo)) == 0
    assert (git_repo / "analysis.ipynb").read_bytes() == NOTEBOOK.read_bytes()
